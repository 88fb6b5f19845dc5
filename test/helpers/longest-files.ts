/**
 * The review alarm for long source files (docs/ARCHITECTURE.md "Long files"): the suite prints the
 * longest files of src/ after every run. A long file is often more than one idea, which a reviewer
 * judges; no number fails the run, so no file is split to fit one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every TypeScript file under `dir` (the dependency test reads the same files). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The `n` longest source files of src/, longest first, with their lines. */
export function longestSourceFiles(n = 5): Array<{ file: string; lines: number }> {
  return sourceFiles(join(ROOT, 'src'))
    .filter((path) => !path.includes('/generated/'))
    .map((path) => ({ file: relative(ROOT, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
    .sort((a, b) => b.lines - a.lines || (a.file < b.file ? -1 : 1))
    .slice(0, n);
}
