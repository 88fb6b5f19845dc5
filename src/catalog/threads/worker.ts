/**
 * A catalog worker thread: owns one SQLite connection (or a small PostgreSQL pool) and runs catalog operations one at a time
 * for the pool (pool.ts), so no catalog read or write ever runs on the thread that answers
 * /verify and /settle. Role `writer` takes settlement hooks, role `reader` discovery requests.
 */
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { CatalogEngine } from './engine.ts';
import { listWithin, searchWithin, type MeasuredPage } from '../page-bytes.ts';
import { configureSchemaValidation, startSchemaValidation } from '../ingest/schema.ts';
import { CatalogStore, readerPageCacheMiB } from '../sqlite/store.ts';
import { PostgresCatalogStore } from '../postgres/store.ts';
import { CatalogUnavailableError, type CatalogLogger } from '../types.ts';
import { fileProblem } from '../../db/sqlite.ts';
import type { WorkerReply, WorkerRequest, WorkerSetup } from './pool.ts';
import { BACKGROUND_THREAD_NICE, lowerThreadPriority } from '../../thread-priority.ts';
import { takenPaths } from '../query-paths.ts';

const setup = workerData as WorkerSetup;

// Discovery yields the CPU to payments. The writer keeps the default priority: /settle waits for
// its answer (the settlement hook), and the schema thread it starts lowers its own.
if (setup.role === 'reader') lowerThreadPriority(BACKGROUND_THREAD_NICE);
const port = parentPort!;
const logger: CatalogLogger = {
  warn: (obj, msg) => port.postMessage({ log: 'warn', obj, msg } satisfies WorkerReply),
  error: (obj, msg) => port.postMessage({ log: 'error', obj, msg } satisfies WorkerReply),
};
// The writer validates sellers' schemas, on a thread started when a settlement that may bring one begins ('prepare').
if (setup.role === 'writer') configureSchemaValidation(setup.schema);
let opened: { engine: CatalogEngine; store: CatalogStore | PostgresCatalogStore } | undefined;
/**
 * This thread's store and the engine over it, opened only on the file svc opened at start
 * (WorkerSetup.fileIdentity): a thread started later (readers start on demand) must neither
 * create a new, empty catalog where the file was deleted nor read a file put in its place, which
 * every thread already open refuses (the store's assertUsable). Checked again at each request
 * until it opens.
 */
function open(): NonNullable<typeof opened> {
  if (opened) return opened;
  const problem = setup.databaseUrl ? null : fileProblem(setup.dbPath, setup.fileIdentity ?? null, false);
  if (problem) throw new CatalogUnavailableError(`the catalog database file ${problem}`);
  const store = setup.databaseUrl
    ? new PostgresCatalogStore(setup.databaseUrl)
    : new CatalogStore(
        setup.dbPath,
        setup.role === 'reader' ? { pageCacheMiB: readerPageCacheMiB(statSync(setup.dbPath, { throwIfNoEntry: false })?.size ?? 0) } : {},
      );
  return (opened = { engine: new CatalogEngine(store, logger, setup.softBudgetMs, setup.ownership), store });
}
try {
  open();
} catch (err) {
  if (!(err instanceof CatalogUnavailableError)) throw err;
}
port.postMessage({ ready: true } satisfies WorkerReply);

/**
 * A discovery page as the main thread asked for it: the object, or its JSON text, the bytes GET
 * /discovery/resources and /discovery/search send (openapi.yaml). Serialized here, the page crosses
 * to the main thread as one string, far cheaper to clone than an object graph (docs/CATALOG.md "Threads").
 */
function pageAnswer(json: boolean | undefined, measured: MeasuredPage<object>): unknown {
  return json ? measured.text : measured.page;
}

async function run(request: WorkerRequest): Promise<unknown> {
  const now = new Date(request.now);
  const { engine, store } = open();
  switch (request.op) {
    case 'record':
      return engine.recordSettlement(request.settled, now, request.strict);
    case 'preview':
      return engine.previewSettlement(request.settled, now);
    case 'withdraw':
      // The store checks the owner and replays and removes the listing in one transaction.
      return store.withdraw(request.withdrawal, now);
    case 'catalog-id':
      return store.catalogId();
    // Every page within what a stock client reads (page-bytes.ts), shrunk when it would not be.
    case 'list':
      return pageAnswer(
        request.json,
        listWithin(await engine.list(request.filters, request.page, now, request.visibleSince, request.failingBefore)),
      );
    case 'search': {
      const { query, filters, page, visibleSince, failingBefore } = request;
      const again = (limit: number) => engine.search(query, filters, { ...page, limit }, now, visibleSince, failingBefore);
      return pageAnswer(request.json, await searchWithin(await again(page.limit), again));
    }
    case 'liveness-claim':
      return store.liveness.claimDue(request.now, request.dueBefore, request.limit);
    case 'liveness-write':
      return store.liveness.writeLiveness(request.key, request.record, request.claimedAt, request.basis);
    case 'liveness-postpone':
      return store.liveness.postponeLiveness(request.keys, request.basis, request.claimedAt);
    case 'liveness-due':
      return store.liveness.countDue(request.dueBefore);
    case 'lifecycle':
      return store.lifecycle.maintain(request.cuts, now, request.limit);
    case 'ownership-claim':
      return engine.claimOwnershipChecks(request.now, request.limit, request.pick);
    case 'ownership-resolve':
      return engine.resolveOwnershipCheck(request.key, request.claimedAt, request.verdict, now);
    case 'ownership-checks':
      return engine.ownershipChecks(request.identity);
    case 'ownership-pending':
      return store.claims
        ? { identities: await store.claims.countPending(), ...(await store.claims.backlog()) }
        : { identities: 0, pending: 0, oldestSettledAt: null };
    case 'ownership-recheck':
      return store.claims?.recheck(request.identity, request.payTo) ?? false;
    case 'ownership-next':
      return store.claims?.nextDue() ?? null;
    case 'probe-host':
      // A store without claims (a test's) bounds nothing.
      return store.claims?.reserveHost(request.host, request.now, request.intervalMs, request.sent) ?? 0;
  }
}

const threadCpu = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage.bind(process) : undefined;

port.on('message', (request: WorkerRequest | 'close' | 'prepare') => {
  if (request === 'close') {
    opened?.engine.close();
    port.close();
    return;
  }
  // A settlement that echoes `bazaar` has begun (the pool's warm): its seller schema should find the
  // schema thread booted, not wait for it inside the hook.
  if (request === 'prepare') {
    if (setup.role === 'writer') startSchemaValidation();
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
  takenPaths(); // a request that failed may have named some: each answer carries its own request's
  // This thread's CPU time for the request (the main thread gives discovery a share of it,
  // src/http/payment-priority.ts); 0 on a Node without threadCpuUsage (before 23.9).
  const cpuAt = threadCpu?.();
  const cpuMs = () => {
    if (!cpuAt) return 0;
    const { user, system } = threadCpu!(cpuAt);
    return (user + system) / 1000;
  };
  run(request).then(
    (value) => {
      const paths = takenPaths();
      port.postMessage({ id: request.id, ok: true, value, cpuMs: cpuMs(), ...(paths.length > 0 ? { paths } : {}) } satisfies WorkerReply);
    },
    (err: unknown) => {
      const e = err as { name?: string; message?: string; code?: string };
      port.postMessage({
        id: request.id,
        cpuMs: cpuMs(),
        ok: false,
        error: { name: String(e?.name ?? 'Error'), message: String(e?.message ?? err), code: e?.code },
      } satisfies WorkerReply);
    },
  );
});
