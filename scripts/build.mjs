/**
 * `npm run build`: what `npm start` runs. esbuild bundles each entry point with its dependencies
 * into ES modules under dist/ (the main process and the two worker threads), because loading
 * hundreds of separate modules was most of svc's startup (docs/BENCHMARKS.md "Startup to ready").
 * Types are checked by `npm run typecheck`, not here. Run by plain Node: no tsx in the build or
 * at run time.
 *
 * What else keeps spawn → /ready short (docs/OPERATIONS.md "Startup"):
 * - whitespace and syntax minified (names kept, so logs and stacks still name functions): Node
 *   reads, decodes and parses every byte of the bundle before running a line of it, and comments
 *   were a third of it;
 * - code splitting: a module imported with `import()` (undici, the MCP SDK) becomes a chunk of its
 *   own, read when first used instead of at start-up;
 * - dist/openapi.json: openapi.yaml parsed once here, with the SHA-256 of the text it came from
 *   (src/http/contract.ts uses it only while that text is unchanged).
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { parse } from 'yaml';

const COMMON = {
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  // Bundled CommonJS dependencies call require() for Node built-ins (and Ajv for its runtime
  // helpers); an ES module has no require, so each bundle gets one resolving from its own file.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};

rmSync('dist', { recursive: true, force: true });
// The main process, split: a CommonJS package loaded with import() then has only a default export
// (its module.exports), so src/ reads such a package's import() through `.default`.
await build({ ...COMMON, entryPoints: ['src/main.ts'], splitting: true, chunkNames: 'chunks/[name]-[hash]' });
// The worker threads, each one file as before: they load little, and the schema worker's import() of
// Ajv keeps its named exports.
await build({ ...COMMON, entryPoints: ['src/catalog/threads/worker.ts', 'src/catalog/ingest/schema-worker.ts'] });
// The agent tool server (`npm run mcp` runs it from source under tsx): the tests whose subject is
// the tool server, not the npm script, start this bundle, about a second of CPU where tsx took three.
await build({ ...COMMON, entryPoints: ['src/mcp/main.ts'] });
// `npm run migrate`'s script (run from source under tsx), bundled likewise for the tests of its
// exit codes and output: about half a second of CPU a run where tsx took nearly three.
await build({ ...COMMON, entryPoints: ['src/migrate.ts'] });

const openapi = readFileSync('openapi.yaml', 'utf8');
/** @type {unknown} */
const document = parse(openapi);
writeFileSync('dist/openapi.json', JSON.stringify({ sha256: createHash('sha256').update(openapi).digest('hex'), document }));
