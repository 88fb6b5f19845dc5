/**
 * openCatalog: the CatalogPort over one SQLite file or a PostgreSQL database (databaseUrl), served
 * by worker threads (threads/pool.ts) so the thread that answers /verify and /settle never runs a catalog
 * query. On an internal fault, a full queue or a missed deadline the settle hook resolves null
 * (header omitted, logged), or rejects when asked to be `strict` (the bazaar extension, so the
 * settlement journal retries the listing). list/search reject with CatalogQueryError: 400 codes
 * for the caller's mistakes, `svc_catalog_busy` (503) when discovery is overloaded,
 * `svc_catalog_unavailable` (503) when the file was deleted, replaced or made read-only; any other
 * fault is a 500.
 */
import { DEFAULT_LISTING_PURGE_DAYS, LIFECYCLE_BATCH, lifecycleCuts, type LifecycleBatch } from './lifecycle.ts';
import { BAZAAR_CODES } from '../codes.ts';
import { precheckSettlement } from './ingest/settlement.ts';
import { CatalogOverloadError, WorkerLanes, type RequestBody } from './threads/pool.ts';
import { distinctTerms } from './term-budget.ts';
import type { TakenPath } from './query-paths.ts';
import { filterViolation, normalizeFilters, type DiscoveryFilters } from '../filters.ts';
import { paymentFactsOf } from './quality.ts';
import { CatalogStore } from './sqlite/store.ts';
import { failingBefore, type LivenessListing } from './liveness.ts';
import type { ClaimBacklog, ClaimResolution, OwnershipCheck, OwnershipClaim } from './ownership.ts';
import { fileIdentity } from '../db/sqlite.ts';
import {
  CatalogQueryError,
  SchemaNotJudgedError,
  type BazaarOutcome,
  type Catalog,
  type CatalogOptions,
  type ListPage,
  type ListingPreview,
  type Requester,
  type SearchPage,
  type WithdrawalOutcome,
} from './types.ts';

export { DISCOVERY_X402_VERSION, SOFT_BUDGET_MS } from './threads/engine.ts';
export type { Catalog } from './types.ts';

const DEFAULT_READ_DEADLINE_MS = 2000;
/** LISTING_TTL_DAYS' default (README.md Configuration). */
const DEFAULT_LISTING_TTL_DAYS = 30;
const DEFAULT_WRITE_DEADLINE_MS = 2000;
/**
 * Readers kept running whatever the traffic (CatalogOptions.readers). None by default: readers start
 * on demand and stop when idle, so a service nobody searches holds no reader isolate in memory
 * (docs/CATALOG.md "Threads"; the first request's boot is covered by the pool's BOOT_ALLOWANCE_MS).
 */
const DEFAULT_READERS = 0;
/**
 * Readers at most: when a request that may run waits and every reader is busy (heavy searches on
 * all of them that may take one, say), one more starts.
 */
const MAX_READERS = 2;
/** A reader started on demand stops after this long idle. */
const READER_IDLE_MS = 5 * 60_000;
/**
 * The writer thread (settlement hooks, and the seller-schema threads it starts) also starts on
 * demand: when a settlement that echoes `bazaar` begins (prepareSettlement, so its boot overlaps
 * the chain's wait) or at the first write; it stops after this long idle.
 */
const WRITER_IDLE_MS = 5 * 60_000;
/**
 * A search of this many distinct terms or more is heavy: its aggregate or window reads up to the
 * search budget's rows (search-engine.ts), where a one-term walk reads a page (docs/BENCHMARKS.md
 * "Discovery under a flood"), so it runs on all readers but one.
 */
const HEAVY_SEARCH_TERMS = 3;
/** Whether a search runs as heavy (on all readers but one). */
export function isHeavySearch(query: string): boolean {
  return distinctTerms(query).length >= HEAVY_SEARCH_TERMS;
}

/** A filter combination no listing can be matched by (src/filters.ts): refused, not run. */
function refuseFilters(filters: DiscoveryFilters): void {
  const violation = filterViolation(filters);
  if (violation !== undefined) throw new CatalogQueryError('svc_invalid_query_parameter', violation);
}

/** The part of the reader queue one client may fill: a quarter. */
const CLIENT_QUEUE_SHARE = 4;

/**
 * A failure to reach the catalog's database server: a socket error, or PostgreSQL's connection
 * classes (08, server shutdown 57P01–57P03, the database missing 3D000). The catalog is then
 * unavailable (503), not broken (500): the next request connects again.
 */
function unreachable(code: string | undefined): boolean {
  if (code === undefined) return false;
  return (
    /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|EPIPE|EAI_AGAIN)$/.test(code) || /^(08...|57P0[1-3]|3D000)$/.test(code)
  );
}

/** An error from a worker, as the class the HTTP layer and the tests know. */
function asCatalogError(err: unknown): unknown {
  if (err instanceof CatalogOverloadError)
    return new CatalogQueryError('svc_catalog_busy', `The catalog is busy (${err.message}); retry shortly.`);
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'CatalogQueryError' && typeof e.code === 'string')
    return new CatalogQueryError(e.code as CatalogQueryError['code'], e.message ?? '');
  if (e?.name === 'CatalogUnavailableError')
    return new CatalogQueryError('svc_catalog_unavailable', `The catalog cannot be used: ${e.message ?? 'unavailable'}.`);
  if (unreachable(e?.code))
    return new CatalogQueryError('svc_catalog_unavailable', 'The catalog database cannot be reached; retry shortly.');
  return err;
}

export function openCatalog(options: CatalogOptions): Catalog {
  const { logger } = options;
  const clock = options.clock ?? (() => new Date());
  const ttlMs = (options.listingTtlDays ?? DEFAULT_LISTING_TTL_DAYS) * 86_400_000;
  /** Listings last settled before this are hidden (LISTING_TTL_DAYS). */
  const visibleSince = (now: number) => new Date(now - ttlMs).toISOString();
  /** Listings failing their liveness checks since before this are hidden (LIVENESS_GRACE_HOURS). */
  const hiddenFailing = (now: number) => failingBefore(now, options.livenessGraceMs);
  /** Liveness work runs on the reader threads (lowered priority), as its own client in their fair queue. */
  const livenessLane = { client: 'svc:liveness' };
  const metricsLane = { client: 'svc:metrics' };
  let catalogIdRead: Promise<string> | undefined;
  // SQLite is opened once here, synchronously: migrations run and a bad file fails the caller now,
  // not in a worker. On Postgres each thread's store migrates under the migration lock as it
  // connects, and a database that cannot be reached fails each request (as any fault: the hook
  // answers null, or rejects when strict).
  if (!options.databaseUrl) new CatalogStore(options.dbPath).close();
  const identity = options.databaseUrl ? null : fileIdentity(options.dbPath);
  const onLog = (level: 'warn' | 'error', obj: object, msg: string) => logger[level](obj, msg);
  // The paths of the pages /metrics reads for its own gauges are not traffic: counted, they would grow with every scrape.
  const onPaths = (paths: TakenPath[], client: string) => {
    if (client !== metricsLane.client) options.onQueryPaths?.(paths);
  };
  const base = {
    dbPath: options.dbPath,
    databaseUrl: options.databaseUrl,
    softBudgetMs: options.softBudgetMs,
    schema: { wallMs: options.schemaWallMs, standby: options.schemaStandby },
    fileIdentity: identity,
    ownership: options.ownership ?? 'first-settlement',
  };
  const writer = new WorkerLanes(
    {
      ...base,
      role: 'writer',
      // Started on demand (prepareSettlement, or the first write) and stopped after WRITER_IDLE_MS idle.
      threads: 0,
      burstThreads: 1,
      burstIdleMs: WRITER_IDLE_MS,
      maxQueued: options.maxQueuedWrites ?? 256,
      deadlineMs: options.writeDeadlineMs ?? DEFAULT_WRITE_DEADLINE_MS,
    },
    onLog,
    onPaths,
  );
  const readerThreads = options.readers ?? DEFAULT_READERS;
  const maxQueuedReads = options.maxQueuedReads ?? 64;
  const readers = new WorkerLanes(
    {
      ...base,
      role: 'reader',
      threads: readerThreads,
      maxQueued: maxQueuedReads,
      maxQueuedPerClient: Math.max(1, Math.ceil(maxQueuedReads / CLIENT_QUEUE_SHARE)),
      burstThreads: Math.max(1, MAX_READERS - readerThreads),
      burstIdleMs: READER_IDLE_MS,
      heavyThreads: Math.max(1, Math.max(readerThreads + 1, MAX_READERS) - 1),
      deadlineMs: options.readDeadlineMs ?? DEFAULT_READ_DEADLINE_MS,
    },
    onLog,
    onPaths,
  );

  /** A discovery page on a reader, in this client's share of the queue; the filters are checked first. */
  async function readPage<Page>(body: Extract<RequestBody, { op: 'list' | 'search' }>, requester: Requester | undefined): Promise<Page> {
    refuseFilters(body.filters);
    body = { ...body, filters: normalizeFilters(body.filters) };
    try {
      const heavy = body.op === 'search' && isHeavySearch(body.query);
      return (await readers.run(body, { client: requester?.client ?? '', heavy })) as Page;
    } catch (err) {
      throw asCatalogError(err);
    }
  }
  /** A request on the writer thread (in turn with settlements' writes), its errors as the catalog's. */
  async function onWriter<T>(body: RequestBody): Promise<T> {
    try {
      return (await writer.run(body)) as T;
    } catch (err) {
      throw asCatalogError(err);
    }
  }
  /** A listing's identity as its claim is keyed: an HTTP listing's tool name is empty. */
  const claimIdentity = ({ resource, type, toolName }: { resource: string; type: string; toolName?: string | undefined }) => ({
    resource,
    type,
    toolName: type === 'mcp' ? (toolName ?? '') : '',
  });
  const hidden = () => {
    const now = clock().getTime();
    return { now, visibleSince: visibleSince(now), failingBefore: hiddenFailing(now) };
  };
  const listRequest = (filters: DiscoveryFilters, page: { limit: number; offset: number }) =>
    ({ op: 'list', ...hidden(), filters, page }) as const;
  const searchRequest = (query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }) =>
    ({ op: 'search', ...hidden(), query, filters, page }) as const;

  return {
    prepareSettlement: () => writer.warm(),
    async recordSettlement(settled, { strict = false } = {}) {
      try {
        const checked = precheckSettlement(settled.paymentPayload, settled.paymentRequirements);
        if (checked.kind === 'none') return null;
        if (checked.kind === 'rejected')
          return { status: 'rejected', rejectedReason: checked.reason || BAZAAR_CODES[checked.code], code: checked.code };
        if (checked.kind !== 'settled') return null;
        const payment = paymentFactsOf(settled.payment);
        return (await writer.run({
          op: 'record',
          now: clock().getTime(),
          settled: { ...checked.settled, payment },
          strict,
        })) as BazaarOutcome | null;
      } catch (err) {
        // A schema not judged now was already logged as a warning by the engine: no fault to report.
        if (!SchemaNotJudgedError.is(err))
          logger.error(
            { err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } },
            'catalog hook did not answer; EXTENSION-RESPONSES omitted',
          );
        if (strict) throw asCatalogError(err);
        return null;
      }
    },
    async previewSettlement(settled) {
      // The same precheck as recordSettlement, then the same judgment on the writer thread (where
      // the seller-schema sandbox runs), without the write.
      const checked = precheckSettlement(settled.paymentPayload, settled.paymentRequirements);
      if (checked.kind === 'none') return { outcome: 'none' };
      if (checked.kind === 'rejected')
        return { outcome: 'rejected', code: checked.code, reason: checked.reason || BAZAAR_CODES[checked.code] };
      if (checked.kind !== 'settled') throw new Error('the settlement cannot be used');
      return onWriter<ListingPreview>({ op: 'preview', now: clock().getTime(), settled: checked.settled });
    },
    async withdraw(withdrawal) {
      // On the writer thread, in turn with settlements' writes of the same listing.
      return onWriter<WithdrawalOutcome>({ op: 'withdraw', now: clock().getTime(), withdrawal });
    },
    async catalogId() {
      // Created with the database and never changed: read once.
      catalogIdRead ??= readers.run({ op: 'catalog-id', now: clock().getTime() }, { client: 'svc:delist' }).then(String);
      try {
        return await catalogIdRead;
      } catch (err) {
        catalogIdRead = undefined;
        throw asCatalogError(err);
      }
    },
    list: (filters, page, requester) => readPage<ListPage>(listRequest(filters, page), requester),
    async listingCounts() {
      // Three totals of the unfiltered list, on the metrics lane of the reader queue: every
      // listing, those within LISTING_TTL_DAYS, and those list shows (also past the liveness cut);
      // and the resources waiting for the origin's check before their first listing.
      const { now, visibleSince: since, failingBefore: failing } = hidden();
      const total = async (cuts: { visibleSince?: string; failingBefore?: string }) =>
        ((await readers.run({ op: 'list', now, filters: {}, page: { limit: 1, offset: 0 }, ...cuts }, metricsLane)) as ListPage).pagination
          .total;
      try {
        const [all, fresh, listed, claims] = await Promise.all([
          total({}),
          total(since === undefined ? {} : { visibleSince: since }),
          total({ ...(since === undefined ? {} : { visibleSince: since }), ...(failing === undefined ? {} : { failingBefore: failing }) }),
          // Only origin ownership makes a settlement wait for a check before its first listing.
          options.ownership === 'origin'
            ? (readers.run({ op: 'ownership-pending', now }, metricsLane) as Promise<ClaimBacklog & { identities: number }>)
            : undefined,
        ]);
        return {
          listed,
          pending: claims?.identities ?? 0,
          hidden: { expired: all - fresh, liveness: fresh - listed },
          ...(claims ? { claims: { pending: claims.pending, oldestSettledAt: claims.oldestSettledAt } } : {}),
        };
      } catch (err) {
        throw asCatalogError(err);
      }
    },
    async listingIndex({ resource, type, toolName }) {
      // On the writer thread, where the validate preview before it ran (a reader may not be booted:
      // two lookups by identity are cheap). The listing as list shows it; when hidden, read again
      // without hiding to say why.
      const filters: DiscoveryFilters = { resource, type, ...(type === 'mcp' && toolName !== undefined ? { toolName } : {}) };
      const page = { limit: 1, offset: 0 };
      const request = listRequest(filters, page);
      const lookup = async (body: RequestBody) => (await onWriter<ListPage>(body)).items[0];
      const shown = await lookup(request);
      if (shown) return { active: true, hiddenBy: null, quality: shown.quality, liveness: shown.liveness };
      const hidden = await lookup({ op: 'list', now: request.now, filters, page });
      if (!hidden) return { active: false, hiddenBy: 'not_listed', quality: null, liveness: null };
      const expired = request.visibleSince !== undefined && hidden.lastUpdated < request.visibleSince;
      return { active: false, hiddenBy: expired ? 'expired' : 'liveness', quality: hidden.quality, liveness: hidden.liveness };
    },
    search: (query, filters, page, requester) => readPage<SearchPage>(searchRequest(query, filters, page), requester),
    listJson: (filters, page, requester) => readPage<string>({ ...listRequest(filters, page), json: true }, requester),
    searchJson: (query, filters, page, requester) => readPage<string>({ ...searchRequest(query, filters, page), json: true }, requester),
    ...(options.ownership === 'origin'
      ? {
          // On the writer thread: in turn with the settlements that claim and the writes a check makes.
          ownership: {
            async claimDue(now, limit, pick) {
              return onWriter<OwnershipClaim[]>({ op: 'ownership-claim', now, limit, pick });
            },
            async nextDue() {
              return onWriter<number | null>({ op: 'ownership-next', now: clock().getTime() });
            },
            async resolve(key, claimedAt, verdict) {
              return onWriter<ClaimResolution>({ op: 'ownership-resolve', now: clock().getTime(), key, claimedAt, verdict });
            },
          },
        }
      : {}),
    async maintainLifecycle() {
      // On the writer thread, in turn with settlements: a batch is short (LIFECYCLE_BATCH listings).
      const now = clock().getTime();
      const cuts = lifecycleCuts(
        now,
        ttlMs,
        options.livenessGraceMs,
        (options.listingPurgeDays ?? DEFAULT_LISTING_PURGE_DAYS) * 86_400_000,
      );
      return onWriter<LifecycleBatch>({ op: 'lifecycle', now, cuts, limit: LIFECYCLE_BATCH });
    },
    async recheckClaim(listing, payTo) {
      if (options.ownership !== 'origin') return false;
      return onWriter<boolean>({ op: 'ownership-recheck', now: clock().getTime(), identity: claimIdentity(listing), payTo });
    },
    async reserveProbeHost(host, intervalMs, sent) {
      // On the writer thread: one small upsert, in turn with the claims it paces.
      return onWriter<number>({ op: 'probe-host', now: clock().getTime(), host, intervalMs, sent });
    },
    async ownershipChecks(listing) {
      if (options.ownership !== 'origin') return [];
      return onWriter<OwnershipCheck[]>({ op: 'ownership-checks', now: clock().getTime(), identity: claimIdentity(listing) });
    },
    liveness: {
      async claimDue(now, dueBefore, limit) {
        return (await readers.run({ op: 'liveness-claim', now, dueBefore, limit }, livenessLane)) as LivenessListing[];
      },
      async writeLiveness(key, record, claimedAt, basis) {
        await readers.run({ op: 'liveness-write', now: clock().getTime(), key, record, claimedAt, basis }, livenessLane);
      },
      async postponeLiveness(keys, basis, claimedAt) {
        await readers.run({ op: 'liveness-postpone', now: clock().getTime(), keys, basis, claimedAt }, livenessLane);
      },
      async countDue(dueBefore) {
        return (await readers.run({ op: 'liveness-due', now: clock().getTime(), dueBefore }, livenessLane)) as number;
      },
    },
    async close() {
      await Promise.all([writer.close(), readers.close()]);
    },
  };
}
