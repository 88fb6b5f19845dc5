/**
 * The review alarms (docs/ARCHITECTURE.md "Long files"): after every run the suite prints the
 * longest files of src/, every doc block (paragraph, list item, table cell) over 200 words, and
 * docs/BENCHMARKS.md's length past 650 lines. Each is something a reviewer judges; no number fails
 * the run, so no file or paragraph is split to fit one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { blocks } from '../docs/paragraphs.ts';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every file under `dir` whose name ends with `ending` (TypeScript unless said: the dependency test reads the same files). */
export function sourceFiles(dir: string, ending = '.ts'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path, ending);
    return entry.name.endsWith(ending) ? [path] : [];
  });
}

/** README.md and every doc under docs/. */
export const docFiles = (): string[] => [join(ROOT, 'README.md'), ...sourceFiles(join(ROOT, 'docs'), '.md')];

/** The `n` longest source files of src/, longest first, with their lines. */
export function longestSourceFiles(n = 5): Array<{ file: string; lines: number }> {
  return sourceFiles(join(ROOT, 'src'))
    .filter((path) => !path.includes('/generated/'))
    .map((path) => ({ file: relative(ROOT, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
    .sort((a, b) => b.lines - a.lines || (a.file < b.file ? -1 : 1))
    .slice(0, n);
}

/** Doc blocks over this many words are named by the alarm. */
export const DOC_BLOCK_WORDS = 200;
/** docs/BENCHMARKS.md past this many lines is named by the alarm: it keeps the present, its history lives in git. */
export const BENCHMARKS_LINES = 650;

/** README.md's and docs/'s blocks over DOC_BLOCK_WORDS, and docs/BENCHMARKS.md when past BENCHMARKS_LINES. */
export function longDocs(): string[] {
  const long = docFiles().flatMap((file) =>
    blocks(readFileSync(file, 'utf8'))
      .filter((b) => b.words > DOC_BLOCK_WORDS)
      .map((b) => `${relative(ROOT, file)}:${b.line} ${b.words} words`),
  );
  const benchmarks = readFileSync(join(ROOT, 'docs/BENCHMARKS.md'), 'utf8').trimEnd().split('\n').length;
  return benchmarks > BENCHMARKS_LINES ? [...long, `docs/BENCHMARKS.md ${benchmarks} lines`] : long;
}
