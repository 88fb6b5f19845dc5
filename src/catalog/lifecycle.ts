/**
 * The lifecycle pass (docs/CATALOG.md "Lifecycle"), written once for both stores over their statements: hidden
 * listings out of the search index (scores stashed on their row, so a search's cost follows the visible listings) and
 * back, and the purge of those hidden past LISTING_PURGE_DAYS. Hiding comes with time, not with a write, so only a pass
 * finds the newly hidden; a search still leaves out what is hidden at the request's time, so its answer does not
 * depend on when the pass last ran. At most LIFECYCLE_BATCH listings per writer request, so a settlement waits for a
 * short batch at most.
 */
import { changes, rows, step, type Engine, type Sql } from './statements.ts';
import { failingBefore } from './liveness.ts';
import type { Awaitable } from './steps.ts';

/**
 * Where a hidden listing's list entries wait while it is out of the search index (its stash set): a time before any
 * listing's, so every list read's age cut (`visibleSince`) leaves them out and counts them as aged, as it does the
 * entries of a listing hidden by age. A list read then leaves out by their failures only the listings no pass has hidden
 * yet (docs/CATALOG.md "Lifecycle").
 */
export const HIDDEN_LIST_TIME = '0000-01-01T00:00:00.000Z';

/** LISTING_PURGE_DAYS' default (README.md Configuration). */
export const DEFAULT_LISTING_PURGE_DAYS = 90;
/** Listings hidden, put back or purged per writer request. */
export const LIFECYCLE_BATCH = 64;
/** The pass's period, and its first run after start. */
const LIFECYCLE_PASS_MS = 10 * 60_000;
const LIFECYCLE_FIRST_PASS_MS = 10_000;

/** What hides a listing at a pass's time, and what purges it (ISO times; undefined: nothing is cut so). */
export interface LifecycleCuts {
  /** Listings last settled before this are hidden (LISTING_TTL_DAYS). */
  visibleSince: string;
  /** Listings failing since before this are hidden (LIVENESS_GRACE_HOURS); undefined without liveness hiding. */
  failingBefore: string | undefined;
  /** Listings last settled before this are purged (hidden by age for LISTING_PURGE_DAYS). */
  purgeSettledBefore: string;
  /** Listings failing since before this are purged (hidden by failures for LISTING_PURGE_DAYS). */
  purgeFailingBefore: string | undefined;
}

export function lifecycleCuts(now: number, ttlMs: number, graceMs: number | undefined, purgeMs: number): LifecycleCuts {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    visibleSince: iso(now - ttlMs),
    failingBefore: failingBefore(now, graceMs),
    purgeSettledBefore: iso(now - ttlMs - purgeMs),
    purgeFailingBefore: graceMs === undefined ? undefined : iso(now - graceMs - purgeMs),
  };
}

/** What one batch did: listings taken out of the search index, put back, purged. */
export interface LifecycleBatch {
  hidden: number;
  restored: number;
  purged: number;
}

export interface LifecycleStorePort {
  /** One batch of at most `limit` listings of each kind, each in its own short transaction. */
  maintain(cuts: LifecycleCuts, now: Date, limit: number): LifecycleBatch | Promise<LifecycleBatch>;
}

/**
 * A hidden listing's search revision as kept on its row: the revision key, each term's score (exact
 * doubles), and the write sequence span it had when it was taken out, [from, to). Put back, the
 * revision is valid from `from` again (the closed one reopened, or its copy if pruned), as if it had
 * never left: a cursor walk pinned while the listing was out of the index finds it once it is back
 * (docs/CATALOG.md "Response and cursor"). A stash without the span (written before it was
 * kept) is put back from the restoring write's sequence.
 */
interface SearchStash {
  hash: string;
  scores: Array<[string, number]>;
  from?: number;
  to?: number;
}

function parseStash(text: string): { hash: string; scores: Map<string, number>; span?: { from: number; to: number } } {
  const stash = JSON.parse(text) as SearchStash;
  const span = Number.isSafeInteger(stash.from) && Number.isSafeInteger(stash.to) ? { from: stash.from!, to: stash.to! } : undefined;
  return { hash: stash.hash, scores: new Map(stash.scores), ...(span ? { span } : {}) };
}

/** A listing a batch acts on, as its candidates are read. */
export interface LifecycleRow {
  id: number | string;
  resource: string;
  type: string;
  tool_name: string;
  last_updated: string;
  /** liveness_failing_since. */
  since: string | null;
}

/**
 * What a batch runs on: the store's statements (the candidates' reads) and its acts on one listing, each answering
 * whether it acted: on SQLite always (the batch's write transaction holds the file); on Postgres in the listing's own
 * transaction under its identity's lock, skipped when another instance's write holds the lock or the listing changed
 * since it was read (postgres/lifecycle.ts).
 */
export interface LifecycleStore {
  sql: Sql;
  /** Deletes the listing with everything of it (a withdrawal's removal). */
  purge: (row: LifecycleRow) => Awaitable<boolean>;
  /** Takes it out of the search index (its revision closed, its scores stashed), hidden since `hiddenAt`. */
  hide: (row: LifecycleRow, hiddenAt: string) => Awaitable<boolean>;
  /** Puts it back from its stash. */
  restore: (row: LifecycleRow) => Awaitable<boolean>;
  /** Prunes revisions past a cursor's life; how many went (0: none left). */
  prune: () => Awaitable<number>;
}

/**
 * Takes listing `id` out of the search index at the write sequence `seq`: its current revision closed (superseded at
 * `hiddenAt`, the time it hid, so a revision hidden longer than a cursor's life is pruned at once), its term scores (its
 * URL keys among them) stashed on its row; and its list entries out of every list read (`moveEntries` to
 * HIDDEN_LIST_TIME). `score`: the column of search_terms that holds a term's score exactly, and what it holds per unit
 * of score (SQLite the score, Postgres score × SCORE_UNITS).
 */
export function* hideListing(
  sql: Sql,
  id: number | string,
  seq: number,
  hiddenAt: string,
  score: { column: string; units: number },
  moveEntries: MoveListEntries,
): Engine<void> {
  const p = sql.p;
  const [current] = yield* rows<{ rev: number | string; text_hash: string; from_seq: number | string }>(
    sql,
    `SELECT rev, text_hash, from_seq FROM search_revisions WHERE listing_id = ${p(1)} AND to_seq IS NULL`,
    [id],
  );
  let scores: Array<[string, number]> = [];
  if (current) {
    const terms = yield* rows<{ term: string; score: number | string }>(
      sql,
      `SELECT term, ${score.column} AS score FROM search_terms WHERE rev = ${p(1)}`,
      [current.rev],
    );
    // A power of two: the division gives the score back bit for bit.
    scores = terms.map((t) => [t.term, Number(t.score) / score.units]);
    yield* changes(sql, `UPDATE search_revisions SET to_seq = ${p(1)}, superseded_at = ${p(2)} WHERE rev = ${p(3)}`, [
      seq,
      hiddenAt,
      current.rev,
    ]);
    yield* changes(sql, `UPDATE search_terms SET to_seq = ${p(1)} WHERE rev = ${p(2)}`, [seq, current.rev]);
  }
  const span = current ? { from: Number(current.from_seq), to: seq } : {};
  const stash: SearchStash = { hash: current?.text_hash ?? '', scores, ...span };
  yield* changes(sql, `UPDATE listings SET search_stash = ${p(1)} WHERE id = ${p(2)}`, [JSON.stringify(stash), id]);
  yield* step(() => moveEntries(HIDDEN_LIST_TIME));
}

/**
 * The store's move of every list entry of the listing at hand (its list keys, with their blocks, and its price rows) to
 * `lastUpdated`, in the write it runs in (sqlite/list-index.ts, postgres/list-index.ts moveListEntries).
 */
export type MoveListEntries = (lastUpdated: string) => Awaitable<unknown>;

/**
 * Puts a stashed listing back in the search index (a settlement's write, a passing check, the pass): the revision it had,
 * valid from where it was (SearchStash), reopened or, if pruned meanwhile, written again by `insert` (the store's new
 * revision from term scores, its URL keys added), and its list entries back at its row's time (`moveEntries`). `seq` is
 * the write's sequence (a stash without its span is put back from it). Whether the listing was stashed.
 */
export function* restoreListing(
  sql: Sql,
  id: number,
  seq: number,
  insert: (resource: string, hash: string, scores: Map<string, number>, fromSeq: number) => Awaitable<unknown>,
  moveEntries: MoveListEntries,
): Engine<boolean> {
  const p = sql.p;
  const [row] = yield* rows<{ resource: string; search_stash: string; last_updated: string }>(
    sql,
    `SELECT resource, search_stash, last_updated FROM listings WHERE id = ${p(1)} AND search_stash IS NOT NULL${sql.lockRows}`,
    [id],
  );
  if (!row) return false;
  const { hash, scores, span } = parseStash(row.search_stash);
  const reopen = `UPDATE search_revisions SET to_seq = NULL, superseded_at = NULL
    WHERE listing_id = ${p(1)} AND to_seq = ${p(2)} AND from_seq = ${p(3)} RETURNING rev`;
  const [reopened] = span ? yield* rows<{ rev: number | string }>(sql, reopen, [id, span.to, span.from]) : [];
  if (reopened) yield* changes(sql, `UPDATE search_terms SET to_seq = NULL WHERE rev = ${p(1)}`, [reopened.rev]);
  else if (scores.size > 0) yield* step(() => insert(row.resource, hash, scores, span?.from ?? seq));
  yield* changes(sql, `UPDATE listings SET search_stash = NULL WHERE id = ${p(1)}`, [id]);
  yield* step(() => moveEntries(row.last_updated));
  return true;
}

/** A stashed listing visible at the cuts `visibleSince` and `failingBefore` (parameters; the latter null without liveness hiding). */
export const visibleAgain = (visibleSince: string, failingBefore: string) =>
  `search_stash IS NOT NULL AND last_updated >= ${visibleSince}
   AND (CAST(${failingBefore} AS TEXT) IS NULL OR liveness_failing_since IS NULL OR liveness_failing_since >= ${failingBefore})`;

/** One batch of a pass: purge, then hide, then put back (at most `limit` of each kind); then prune. */
export function* maintainBatch(store: LifecycleStore, cuts: LifecycleCuts, now: Date, limit: number): Engine<LifecycleBatch> {
  const { sql } = store;
  const p = sql.p;
  const nowMs = now.getTime();
  const ttlMs = nowMs - Date.parse(cuts.visibleSince);
  const graceMs = cuts.failingBefore === undefined ? 0 : nowMs - Date.parse(cuts.failingBefore);
  const select = (where: string, order: string, ...params: unknown[]) =>
    rows<LifecycleRow>(
      sql,
      `SELECT id, resource, type, tool_name, last_updated, liveness_failing_since AS since FROM listings
       WHERE ${where} ORDER BY ${order} LIMIT ${p(params.length + 1)}`,
      [...params, limit],
    );
  const done = { hidden: 0, restored: 0, purged: 0 };

  const purging = new Map<string, LifecycleRow>();
  // The listings by age are read from the two partial indexes that hold them all (search_stash null or not): Postgres
  // has no other index on listings by age, and one statement over both would read every listing's row.
  for (const stash of ['IS NULL', 'IS NOT NULL'])
    for (const row of yield* select(`search_stash ${stash} AND last_updated < ${p(1)}`, 'last_updated, id', cuts.purgeSettledBefore))
      purging.set(String(row.id), row);
  if (cuts.purgeFailingBefore !== undefined)
    for (const row of yield* select(`liveness_failing_since < ${p(1)}`, 'liveness_failing_since', cuts.purgeFailingBefore))
      purging.set(String(row.id), row);
  for (const row of purging.values()) if (yield* step(() => store.purge(row))) done.purged++;

  // Newly hidden: the start of the indexed listings by age and by failures. When it hid: the later of the two cuts it crossed.
  const hiding = new Map<string, { row: LifecycleRow; at: number }>();
  const since = (row: LifecycleRow, at: number) =>
    hiding.set(String(row.id), { row, at: Math.max(hiding.get(String(row.id))?.at ?? 0, Math.min(nowMs, at)) });
  for (const row of yield* select(`search_stash IS NULL AND last_updated < ${p(1)}`, 'last_updated, id', cuts.visibleSince))
    since(row, Date.parse(row.last_updated) + ttlMs);
  if (cuts.failingBefore !== undefined)
    for (const row of yield* select(
      `search_stash IS NULL AND liveness_failing_since < ${p(1)}`,
      'liveness_failing_since, id',
      cuts.failingBefore,
    ))
      since(row, Date.parse(row.since!) + graceMs);
  for (const { row, at } of hiding.values()) if (yield* step(() => store.hide(row, new Date(at).toISOString()))) done.hidden++;

  // Hidden before and visible now (a longer TTL or grace since, or a clock set back).
  for (const row of yield* select(visibleAgain(p(1), p(2)), 'last_updated, id', cuts.visibleSince, cuts.failingBefore ?? null))
    if (yield* step(() => store.restore(row))) done.restored++;

  // The hidden revisions (and any other past a cursor's life) leave the index now, not a few per settlement.
  for (let pruned = 0, n = 1; n > 0 && pruned < 4 * limit; pruned += n) n = yield* step(() => store.prune());
  return done;
}

/** The catalog's side of a pass: one batch on the writer (CatalogPort.maintainLifecycle). */
type MaintainBatch = () => Promise<LifecycleBatch>;

interface LifecycleLog {
  warn(obj: object, msg: string): void;
}

/**
 * Runs the passes: the first LIFECYCLE_FIRST_PASS_MS after start, then every LIFECYCLE_PASS_MS,
 * on a timer that never keeps the process alive. A pass runs batches while they come back full.
 * `onBatch` counts (the purged-listings metric).
 */
export class LifecycleScheduler {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<LifecycleBatch> | undefined;
  private stopped = false;

  constructor(
    private readonly batch: MaintainBatch,
    private readonly log: LifecycleLog,
    private readonly onBatch: (batch: LifecycleBatch) => void,
  ) {}

  start(): this {
    this.schedule(LIFECYCLE_FIRST_PASS_MS);
    return this;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.runOnce().finally(() => this.schedule(LIFECYCLE_PASS_MS)), delayMs);
    this.timer.unref();
  }

  /** One pass (after the one running); resolves to its totals. A failure is logged, never thrown. */
  async runOnce(): Promise<LifecycleBatch> {
    while (this.running) await this.running;
    const totals = { hidden: 0, restored: 0, purged: 0 };
    this.running = (async () => {
      try {
        for (let full = true; full && !this.stopped;) {
          const done = await this.batch();
          this.onBatch(done);
          totals.hidden += done.hidden;
          totals.restored += done.restored;
          totals.purged += done.purged;
          full = Math.max(done.hidden, done.restored, done.purged) >= LIFECYCLE_BATCH;
        }
      } catch (err) {
        this.log.warn(
          { err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } },
          'catalog lifecycle pass failed',
        );
      }
      return totals;
    })();
    try {
      return await this.running;
    } finally {
      this.running = undefined;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
