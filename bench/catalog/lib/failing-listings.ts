/**
 * Listings failing their liveness checks in a kept Postgres catalog (filter-combos `--failing`). A real catalog holds
 * some; the benchmarks' none, as their servers' checks are off. The statements that leave them out are planned on the
 * share there is (docs/CATALOG.md "Liveness"), so a run can set one: a share of the listings, chosen by a hash of their
 * ids (the same ones on every copy), half failing for longer than the grace period (hidden) and half within it.
 */
import pg from 'pg';

/** LIVENESS_GRACE_HOURS of the servers a run with failing listings starts (README.md's default, said outright). */
export const FAILING_GRACE_HOURS = 24;

/** The listing's failing time, `hours` before now, as svc writes it (an ISO time). */
const hoursAgo = (hours: string) =>
  `to_char((now() - make_interval(hours => (${hours})::int, mins => (abs(hashint8(id + 3)) % 60)::int)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Sets `share` (0–1) of the listings of the database at `url` failing, the others not, and analyzes `listings` (as
 * autovacuum would after so many changes). The failing half within the grace period began 0 to 22 hours ago, the
 * other 1 to 480 hours past it (before any purge: LISTING_PURGE_DAYS). How many fail, and how many of those are hidden.
 */
export async function markFailing(url: string, share: number): Promise<{ failing: number; hidden: number }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const grace = FAILING_GRACE_HOURS;
    const since = `CASE WHEN abs(hashint8(id)) % 1000000 < ${Math.round(share * 1e6)} THEN ${hoursAgo(
      `CASE WHEN abs(hashint8(id + 1)) % 2 = 0 THEN ${grace + 1} + abs(hashint8(id + 2)) % 480 ELSE abs(hashint8(id + 2)) % ${grace - 1} END`,
    )} END`;
    await db.query(
      `UPDATE listings l SET liveness_failing_since = m.since, liveness_status = CASE WHEN m.since IS NULL THEN NULL ELSE 'unreachable' END
       FROM (SELECT id, ${since} AS since FROM listings) m
       WHERE l.id = m.id AND (l.liveness_failing_since IS DISTINCT FROM m.since OR (m.since IS NULL AND l.liveness_status IS NOT NULL))`,
    );
    await db.query('ANALYZE listings');
    const { rows } = await db.query<{ failing: string; hidden: string }>(
      `SELECT count(*) AS failing, count(*) FILTER (WHERE liveness_failing_since < $1) AS hidden FROM listings WHERE liveness_failing_since IS NOT NULL`,
      [new Date(Date.now() - grace * 3_600_000).toISOString()],
    );
    return { failing: Number(rows[0]!.failing), hidden: Number(rows[0]!.hidden) };
  } finally {
    await db.end();
  }
}

/**
 * Waits until the lifecycle pass of the server on the database at `url` (its first 10 s after it starts) has taken
 * every hidden listing out of the search index and put back every other, as a running catalog's are, then analyzes
 * `listings` again: what it stashed was measured otherwise while it happened.
 */
export async function settledLifecycle(url: string, timeoutMs = 180_000): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    for (const started = Date.now(); ; await new Promise((done) => setTimeout(done, 1000))) {
      const cut = new Date(Date.now() - FAILING_GRACE_HOURS * 3_600_000).toISOString();
      const { rows } = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM listings WHERE (search_stash IS NULL) = ((liveness_failing_since < $1) IS TRUE)`,
        [cut],
      );
      if (Number(rows[0]!.n) === 0) break;
      if (Date.now() - started > timeoutMs) throw new Error(`lifecycle pass left ${rows[0]!.n} listings to hide or restore`);
    }
    await db.query('ANALYZE listings');
  } finally {
    await db.end();
  }
}
