/**
 * Code, tests, benchmarks and docs cite a doc's section by name (`docs/CATALOG.md "The search budget"`): every such
 * citation names a heading of that doc or a bold label in it (`**Price filters.**`), so a renamed section cannot leave
 * a reader looking for a part that is gone.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const SCANNED = ['src', 'test', 'bench', 'scripts', 'docs', 'README.md'];
/** A doc's name, then the section's in double quotes (docs/ optional); a `'` inside a string is escaped in code. */
const CITATION = /(?:docs\/)?([A-Z][A-Z_]*\.md) "((?:[^"\\\n]|\\.)+)"/g;

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(ts|mts|md|sh|yaml)$/.test(name) && !name.includes('node_modules'))
    .map((name) => join(full, name));
}

/** A doc's section names: its headings (without `#`) and its bold labels (the text between `**`). */
function sectionNames(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const headings = [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1]!.trim());
  const labels = [...text.matchAll(/\*\*([^*\n]+)\*\*/g)].map((m) => m[1]!.trim().replace(/[.:]$/, ''));
  return [...headings, ...labels];
}

describe('section citations', () => {
  it('name a heading or bold label of the doc they cite', () => {
    const names = new Map<string, string[]>();
    const dangling: string[] = [];
    let cited = 0;
    for (const file of SCANNED.flatMap(files)) {
      for (const m of readFileSync(file, 'utf8').matchAll(CITATION)) {
        const doc = m[1] === 'README.md' ? 'README.md' : `docs/${m[1]}`;
        let known = names.get(doc);
        if (!known) {
          try {
            known = sectionNames(doc);
          } catch {
            continue; // another project's file name (the x402 spec's), not one of ours
          }
          names.set(doc, known);
        }
        const section = m[2]!.replace(/\\(.)/g, '$1');
        cited++;
        // A citation may name a heading's first words ("Ownership" for "Ownership and refresh").
        if (!known.some((name) => name === section || name.startsWith(`${section} `) || name.startsWith(`${section}:`)))
          dangling.push(`${relative(ROOT, file)}: ${doc} "${section}"`);
      }
    }
    expect(cited).toBeGreaterThan(100);
    expect(dangling).toEqual([]);
  });
});
