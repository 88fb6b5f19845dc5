/**
 * `npm run build`: what `npm start` runs. esbuild bundles each entry point with its dependencies
 * into one ES module under dist/ (the main process and the two worker threads), because loading
 * hundreds of separate modules was most of svc's startup (docs/BENCHMARKS.md "Startup to ready").
 * Types are checked by `npm run typecheck`, not here. Run by plain Node: no tsx in the build or
 * at run time.
 */
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const ENTRY_POINTS = ['src/main.ts', 'src/catalog/threads/worker.ts', 'src/catalog/ingest/schema-worker.ts'];

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ENTRY_POINTS,
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  // Bundled CommonJS dependencies call require() for Node built-ins (and Ajv for its runtime
  // helpers); an ES module has no require, so each bundle gets one resolving from its own file.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
