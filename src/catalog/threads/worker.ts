/**
 * A catalog worker thread: owns one SQLite connection (or a small PostgreSQL pool) and runs catalog operations one at a time
 * for the pool (pool.ts), so no catalog read or write ever runs on the thread that answers
 * /verify and /settle. Role `writer` takes settlement hooks, role `reader` discovery requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CatalogEngine } from './engine.ts';
import { warmSchemaValidation } from '../ingest/schema.ts';
import { CatalogStore } from '../sqlite/store.ts';
import { PostgresCatalogStore } from '../postgres/store.ts';
import type { CatalogLogger } from '../types.ts';
import type { WorkerReply, WorkerRequest, WorkerSetup } from './pool.ts';
import { BACKGROUND_THREAD_NICE, lowerThreadPriority } from '../../thread-priority.ts';

const setup = workerData as WorkerSetup;

// Discovery yields the CPU to payments. The writer keeps the default priority: /settle waits for
// its answer (the settlement hook), and the schema thread it starts lowers its own.
if (setup.role === 'reader') lowerThreadPriority(BACKGROUND_THREAD_NICE);
const port = parentPort!;
const logger: CatalogLogger = {
  warn: (obj, msg) => port.postMessage({ log: 'warn', obj, msg } satisfies WorkerReply),
  error: (obj, msg) => port.postMessage({ log: 'error', obj, msg } satisfies WorkerReply),
};
// The writer validates sellers' schemas: its validation thread starts booting first.
if (setup.role === 'writer') warmSchemaValidation(setup.schemaWallMs === undefined ? {} : { wallMs: setup.schemaWallMs });
const store = setup.databaseUrl ? new PostgresCatalogStore(setup.databaseUrl) : new CatalogStore(setup.dbPath);
const engine = new CatalogEngine(store, logger, setup.softBudgetMs);

async function run(request: WorkerRequest): Promise<unknown> {
  const now = new Date(request.now);
  switch (request.op) {
    case 'record':
      return engine.recordSettlement(request.settled, now, request.strict);
    case 'preview':
      return engine.previewSettlement(request.settled, now);
    case 'withdraw':
      return engine.withdraw(request.withdrawal, now);
    case 'list':
      return engine.list(request.filters, request.page, now, request.visibleSince, request.failingBefore);
    case 'search':
      return engine.search(request.query, request.filters, request.page, now, request.visibleSince, request.failingBefore);
    case 'liveness-claim':
      return store.liveness.claimDue(request.now, request.dueBefore, request.limit);
    case 'liveness-write':
      return store.liveness.writeLiveness(request.key, request.record, request.claimedAt);
    case 'liveness-postpone':
      return store.liveness.postponeLiveness(request.keys, request.basis, request.claimedAt);
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
