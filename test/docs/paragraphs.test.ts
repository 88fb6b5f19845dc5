/**
 * Docs state the present in blocks a reader can take in. A paragraph, list item or table cell of README.md or docs/
 * over 200 words (fenced code is not counted), and docs/BENCHMARKS.md past 650 lines, are review alarms the suite
 * prints after every run (test/helpers/longest-files.ts), never a failure: no paragraph is split to fit a number.
 * These tests hold the counter the alarm uses.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blocks } from './paragraphs.ts';
import { DOC_BLOCK_WORDS, docFiles } from '../helpers/longest-files.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('docs', () => {
  const files = docFiles();

  it('reads every doc', () => {
    expect(files.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['README.md', 'docs/CATALOG.md', 'docs/BENCHMARKS.md']));
    for (const file of files) expect(blocks(readFileSync(file, 'utf8')).length, file).toBeGreaterThan(0);
  });
});

describe('blocks (the counter itself)', () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

  it('counts a paragraph wrapped over lines as one block', () => {
    expect(blocks(`${words(150)}\n${words(60)}\n`)).toEqual([{ line: 1, words: 210, text: `${words(150)} ${words(60)}` }]);
  });

  it('counts each list item on its own, nested items and continuation paragraphs apart', () => {
    const md = `- ${words(150)}\n  ${words(40)}\n  - ${words(120)}\n\n  ${words(30)}\n- ${words(5)}\n`;
    expect(blocks(md).map((b) => [b.line, b.words])).toEqual([
      [1, 190],
      [3, 120],
      [5, 30],
      [6, 5],
    ]);
  });

  it('counts table cells, not rows, and skips the separator row', () => {
    const md = `| a | b |\n| --- | :-: |\n| ${words(150)} | ${words(150)} |\n`;
    expect(blocks(md).map((b) => b.words)).toEqual([1, 1, 150, 150]);
  });

  it('leaves fenced code and headings out', () => {
    const md = `# ${words(300)}\n\n\`\`\`sh\n${words(300)}\n\`\`\`\n\n~~~\n${words(300)}\n~~~\ntext\n`;
    expect(blocks(md)).toEqual([{ line: 10, words: 1, text: 'text' }]);
  });

  it('finds a block over the limit', () => {
    expect(blocks(`intro\n\n${words(201)}\n`).filter((b) => b.words > DOC_BLOCK_WORDS)).toHaveLength(1);
  });
});
