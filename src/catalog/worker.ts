/**
 * A catalog worker thread: owns one SQLite connection (or a small PostgreSQL pool) and runs catalog operations one at a time
 * for the pool (pool.ts), so no catalog read or write ever runs on the thread that answers
 * /verify and /settle. Role `writer` takes settlement hooks, role `reader` discovery requests.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { CatalogEngine } from './engine.ts';
import { warmSchemaValidation } from './schema.ts';
import { CatalogStore } from './store.ts';
import { PostgresCatalogStore } from './store-postgres.ts';
import type { CatalogLogger } from './types.ts';
import type { WorkerReply, WorkerRequest, WorkerSetup } from './pool.ts';

const setup = workerData as WorkerSetup;

/**
 * On Linux the nice value is per thread (setpriority(2) with a thread id): a catalog thread runs at
 * a lower priority than the thread answering /verify and /settle, so on a busy machine discovery
 * yields the CPU to payments. Elsewhere this is skipped.
 */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, CATALOG_THREAD_NICE);
  } catch {
    // not Linux, or not permitted: run at the default priority
  }
}
const CATALOG_THREAD_NICE = 10;
lowerThreadPriority();
const port = parentPort!;
const logger: CatalogLogger = {
  warn: (obj, msg) => port.postMessage({ log: 'warn', obj, msg } satisfies WorkerReply),
  error: (obj, msg) => port.postMessage({ log: 'error', obj, msg } satisfies WorkerReply),
};
// The writer validates sellers' schemas: its validation thread starts booting first.
if (setup.role === 'writer') warmSchemaValidation();
const store = setup.databaseUrl ? new PostgresCatalogStore(setup.databaseUrl) : new CatalogStore(setup.dbPath);
const engine = new CatalogEngine(store, logger, setup.softBudgetMs);

async function run(request: WorkerRequest): Promise<unknown> {
  const now = new Date(request.now);
  switch (request.op) {
    case 'record':
      return engine.recordSettlement(request.settled, now);
    case 'list':
      return engine.list(request.filters, request.page);
    case 'search':
      return engine.search(request.query, request.filters, request.page, now);
  }
}

port.on('message', (request: WorkerRequest | 'close') => {
  if (request === 'close') {
    engine.close();
    port.close();
    return;
  }
  // A request whose caller has already given up is not worth running.
  if (Date.now() > request.deadline) {
    port.postMessage({
      id: request.id,
      ok: false,
      error: { name: 'Expired', message: 'deadline passed before the request ran' },
    } satisfies WorkerReply);
    return;
  }
  run(request).then(
    (value) => port.postMessage({ id: request.id, ok: true, value } satisfies WorkerReply),
    (err: unknown) => {
      const e = err as { name?: string; message?: string; code?: string };
      port.postMessage({
        id: request.id,
        ok: false,
        error: { name: String(e?.name ?? 'Error'), message: String(e?.message ?? err), code: e?.code },
      } satisfies WorkerReply);
    },
  );
});
