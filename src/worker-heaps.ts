/**
 * V8 takes a heap-size flag set for the process (`--max-semi-space-size`, `--max-old-space-size`)
 * over the resourceLimits a worker thread asks for. scripts/start.sh sets both for the main thread;
 * each worker thread (catalog/threads/pool.ts, catalog/ingest/schema-validator.ts) sizes its own
 * heap, so both flags are cleared once, before the first worker thread starts. The main thread's
 * heap was sized when it started and keeps those sizes (Node calls changing V8 flags at run time
 * unsupported: test/ops/start.test.ts checks each thread's heap under `npm start`). Why these sizes:
 * docs/BENCHMARKS.md "svc memory and its Node flags".
 */
import v8 from 'node:v8';

let cleared = false;

/** Call before `new Worker(…, { resourceLimits })`: from then on, the limits a worker asks for hold. */
export function workerHeapsFromLimits(): void {
  if (cleared) return;
  cleared = true;
  v8.setFlagsFromString('--max-semi-space-size=0');
  v8.setFlagsFromString('--max-old-space-size=0');
}
