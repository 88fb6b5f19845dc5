/** The fenced blocks of a Markdown text written as ```LANG, each without its fences, in order. */
export function fencedBlocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
}
