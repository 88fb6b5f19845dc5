/**
 * The blocks of a markdown document a reader takes in one go: paragraphs, list items (each nested item on its own) and
 * table cells, with fenced code left out. Used by paragraphs.test.ts to hold docs to at most 200 words a block.
 */
export interface Block {
  /** 1-based line where the block starts. */
  line: number;
  words: number;
  text: string;
}

const ITEM = /^(\s*)([-*+]|\d+[.)])\s+/;

export function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  let current: { line: number; parts: string[] } | undefined;
  const close = () => {
    if (current) {
      const text = current.parts.join(' ').trim();
      if (text !== '') found.push({ line: current.line, words: text.split(/\s+/).length, text });
    }
    current = undefined;
  };
  let fence: string | undefined;
  markdown.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    const fenceMark = /^(```|~~~)/.exec(trimmed)?.[1];
    if (fence !== undefined) {
      if (fenceMark === fence) fence = undefined;
      return;
    }
    if (fenceMark !== undefined) {
      close();
      fence = fenceMark;
      return;
    }
    if (trimmed === '' || /^#{1,6}\s/.test(trimmed) || /^(-{3,}|\*{3,})$/.test(trimmed)) {
      close();
      return;
    }
    if (trimmed.startsWith('|')) {
      close();
      if (/^\|[\s:|-]+\|$/.test(trimmed)) return; // the header's separator row
      for (const cell of trimmed.slice(1, trimmed.endsWith('|') ? -1 : undefined).split(/(?<!\\)\|/)) {
        const text = cell.trim();
        if (text !== '') found.push({ line, words: text.split(/\s+/).length, text });
      }
      return;
    }
    const item = ITEM.exec(raw);
    if (item) {
      close();
      current = { line, parts: [raw.slice(item[0].length)] };
      return;
    }
    if (!current) current = { line, parts: [] };
    current.parts.push(trimmed);
  });
  close();
  return found;
}
