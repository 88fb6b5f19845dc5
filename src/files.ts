/**
 * Where svc's own files are at run time. The same code runs from source (tsx, vitest: src/…ts),
 * and from the build (`npm run build`: the bundles dist/main.js, dist/catalog/threads/worker.js and
 * dist/catalog/ingest/schema-worker.js), so paths are taken from the project root, never from the
 * location of the module that asks (which a bundle changes).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The nearest folder above this module holding package.json: the project root. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`svc: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = projectRoot();

/** A file shipped with svc (openapi.yaml, public/…), by its path in the repository. */
export function projectFile(path: string): string {
  return join(PROJECT_ROOT, path);
}

/**
 * Worker threads from the build even when this thread runs from source: the test suite sets
 * SVC_WORKER_BUNDLES=1 (vitest.config.ts; its global setup builds dist/ from the current sources
 * first). A thread loading src/ strips the types of every module it imports again, about twice
 * the CPU of loading the bundle, and the suite opens about 170 catalogs, each with its threads
 * (docs/TESTING.md).
 */
const WORKERS_FROM_SOURCE = FROM_SOURCE && process.env.SVC_WORKER_BUNDLES !== '1';

/** A module svc runs as a worker thread, by its path under src/ without extension (e.g. `catalog/threads/worker`). */
export function workerModuleUrl(path: string): URL {
  return pathToFileURL(join(PROJECT_ROOT, WORKERS_FROM_SOURCE ? `src/${path}.ts` : `dist/${path}.js`));
}
