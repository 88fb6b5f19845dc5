/**
 * The dependency rule of docs/ARCHITECTURE.md, checked over every import in src/: the core
 * (src/scheme) knows no chain, no HTTP and no store; Stellar is reached only through its public
 * surface (src/chains/stellar/index.ts) and its SDK only inside the chain folder and the devnet;
 * the HTTP layer knows no chain; the catalog knows no chain and no HTTP.
 */
import { readdirSync, readFileSync } from 'node:fs';
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

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
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
const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);
const violations = (test: (edge: Edge) => boolean) => edges.filter(test).map((e) => `${e.from} → ${e.to}`);

describe('the dependency rule (docs/ARCHITECTURE.md)', () => {
  it('sees the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges).toContainEqual({ from: 'src/service.ts', to: 'src/chains/stellar/index.ts' });
    expect(edges).toContainEqual({ from: 'src/chains/stellar/rpc.ts', to: '@stellar/stellar-sdk' });
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

  it('only the entry points import the composition root', () => {
    const entries = ['src/main.ts', 'src/dev/stack.ts'];
    expect(violations((e) => e.to === 'src/service.ts' && !entries.includes(e.from))).toEqual([]);
  });
});
