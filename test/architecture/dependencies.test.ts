/**
 * The dependency rule of docs/ARCHITECTURE.md, checked over every import in src/: no import
 * cycles; the core (src/scheme) knows no chain, no HTTP and no store; Stellar is reached only
 * through its public surface (src/chains/stellar/index.ts) and its SDK only inside the chain folder
 * and the devnet; a chain does not read the service configuration; the HTTP layer knows no chain;
 * the catalog knows no chain and no HTTP; and each storage backend stays in its own folder. (File
 * length is a review alarm the suite prints, not a rule: test/helpers/longest-files.ts.)
 */
import { readFileSync } from 'node:fs';
import { sourceFiles } from '../helpers/longest-files.ts';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

interface Edge {
  /** e.g. src/http/app.ts */
  from: string;
  /** a repository path (src/…) for a relative import, else the package name */
  to: string;
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

/** Every import of every file under src/ (static, re-export, side-effect and literal dynamic imports). */
function importEdges(): Edge[] {
  return sourceFiles(SRC).flatMap((file) => {
    const from = relative(ROOT, file);
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(SPECIFIER)].map((m) => {
      const specifier = (m[1] ?? m[2] ?? m[3])!;
      const to = specifier.startsWith('.') ? relative(ROOT, resolve(dirname(file), specifier)) : packageOf(specifier);
      return { from, to };
    });
  });
}

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

const edges = importEdges();

/**
 * The import cycles among src/ files (type-only imports included: a circle of types still ties
 * two modules together), as Tarjan's strongly connected components of more than one file (or a
 * file importing itself), each listed with the imports that close it.
 */
function importCycles(among: Edge[] = edges): string[][] {
  const graph = new Map<string, string[]>();
  for (const { from, to } of among) if (to.startsWith('src/')) graph.set(from, [...(graph.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let top = stack.pop()!; ; top = stack.pop()!) {
      onStack.delete(top);
      component.push(top);
      if (top === file) break;
    }
    if (component.length > 1 || graph.get(file)?.includes(file))
      cycles.push(component.flatMap((a) => (graph.get(a) ?? []).filter((b) => component.includes(b)).map((b) => `${a} → ${b}`)));
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);
const violations = (test: (edge: Edge) => boolean) => edges.filter(test).map((e) => `${e.from} → ${e.to}`);

describe('the dependency rule (docs/ARCHITECTURE.md)', () => {
  it('sees the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges).toContainEqual({ from: 'src/service.ts', to: 'src/chains/stellar/index.ts' });
    expect(edges).toContainEqual({ from: 'src/chains/stellar/rpc.ts', to: '@stellar/stellar-sdk' });
  });

  it('src/ has no import cycles', () => {
    expect(importCycles()).toEqual([]);
  });

  it('finds a cycle when there is one (the checker itself)', () => {
    const circle = [
      { from: 'src/a.ts', to: 'src/b.ts' },
      { from: 'src/b.ts', to: 'src/a.ts' },
      { from: 'src/a.ts', to: 'src/c.ts' },
    ];
    expect(importCycles(circle)).toEqual([['src/b.ts → src/a.ts', 'src/a.ts → src/b.ts']]);
    expect(importCycles(circle.slice(1))).toEqual([]);
  });

  it('the Stellar SDK is imported only inside src/chains/stellar and the devnet', () => {
    const sdk = ['@stellar/stellar-sdk', '@stellar/stellar-base', '@x402/stellar'];
    expect(violations((e) => sdk.includes(e.to) && !within(e.from, 'src/chains/stellar') && !within(e.from, 'src/devnet'))).toEqual([]);
  });

  it('outside its folder, Stellar is reached only through src/chains/stellar/index.ts', () => {
    expect(
      violations(
        (e) => within(e.to, 'src/chains/stellar') && !within(e.from, 'src/chains/stellar') && e.to !== 'src/chains/stellar/index.ts',
      ),
    ).toEqual([]);
  });

  it('the core (src/scheme) imports only itself, the codes and the generated contract types', () => {
    const allowed = (to: string) => within(to, 'src/scheme') || to === 'src/codes.ts' || within(to, 'src/generated');
    expect(violations((e) => within(e.from, 'src/scheme') && !allowed(e.to))).toEqual([]);
  });

  it('the HTTP layer (src/http, src/handlers) imports no chain', () => {
    expect(violations((e) => (within(e.from, 'src/http') || within(e.from, 'src/handlers')) && within(e.to, 'src/chains'))).toEqual([]);
  });

  it('the catalog imports no chain and no HTTP layer', () => {
    const forbidden = (to: string) => within(to, 'src/chains') || within(to, 'src/http') || within(to, 'src/handlers') || to === 'koa';
    expect(violations((e) => within(e.from, 'src/catalog') && forbidden(e.to))).toEqual([]);
  });

  it('a chain imports no HTTP layer, no catalog and no composition root', () => {
    const forbidden = (to: string) =>
      within(to, 'src/http') || within(to, 'src/handlers') || within(to, 'src/catalog') || to === 'src/service.ts' || to === 'koa';
    expect(violations((e) => within(e.from, 'src/chains') && forbidden(e.to))).toEqual([]);
  });

  it('a chain parses its own configuration: nothing under src/chains imports src/config.ts', () => {
    expect(violations((e) => within(e.from, 'src/chains') && e.to === 'src/config.ts')).toEqual([]);
  });

  it('the catalog by role: what both backends share and the seller-input path import no backend and no thread plumbing', () => {
    const catalogTop = (path: string) => path.startsWith('src/catalog/') && !path.slice('src/catalog/'.length).includes('/');
    const role = (path: string) => ['sqlite', 'postgres', 'threads'].some((folder) => within(path, `src/catalog/${folder}`));
    expect(
      violations((e) => ((catalogTop(e.from) && e.from !== 'src/catalog/index.ts') || within(e.from, 'src/catalog/ingest')) && role(e.to)),
    ).toEqual([]);
  });

  it('each storage backend stays in its folder: SQLite and Postgres code never import each other', () => {
    const backendOf = (path: string) => /^src\/(catalog|journal)\/(sqlite|postgres)\//.exec(path)?.[2];
    expect(
      violations((e) => backendOf(e.from) !== undefined && backendOf(e.to) !== undefined && backendOf(e.from) !== backendOf(e.to)),
    ).toEqual([]);
  });

  it('outside the catalog, its backends are reached only by the migration command (src/db/migrate.ts)', () => {
    const backend = (path: string) => within(path, 'src/catalog/sqlite') || within(path, 'src/catalog/postgres');
    expect(violations((e) => backend(e.to) && !within(e.from, 'src/catalog') && e.from !== 'src/db/migrate.ts')).toEqual([]);
  });

  it('the database plumbing (src/db/postgres.ts, sqlite.ts, schema-versions.ts) imports nothing of svc but itself', () => {
    const plumbing = ['src/db/postgres.ts', 'src/db/sqlite.ts', 'src/db/schema-versions.ts'];
    expect(violations((e) => plumbing.includes(e.from) && e.to.startsWith('src/') && !plumbing.includes(e.to))).toEqual([]);
  });

  it('only the entry points import the composition root', () => {
    const entries = ['src/main.ts', 'src/dev/stack.ts'];
    expect(violations((e) => e.to === 'src/service.ts' && !entries.includes(e.from))).toEqual([]);
  });
});
