/**
 * PostgreSQL for svc (docs/SCALING.md): one connection pool per process, and versioned
 * migrations per component (journal, submitter leases, …) applied at start under an advisory
 * lock, so several instances starting together migrate once. `npm run migrate` applies them
 * without starting svc.
 */
import pg from 'pg';
import { latestVersion, stepsFrom, type Schema } from './schema-versions.ts';

/**
 * A pool svc uses. `pg` returns BIGINT as a string; stores convert where they read one. With
 * `pipeline`, its connections send a statement without waiting for the answers to the ones before
 * it (pg's pipeline mode; each statement still gets its own answer and error), which
 * inReadSnapshot uses to send BEGIN with the first statement.
 */
export function openPool(url: string, options: { max?: number; pipeline?: boolean; keepIdle?: number; idleMs?: number } = {}): pg.Pool {
  const max = options.max ?? 10;
  // allowExitOnIdle: an idle pool never keeps a process alive after its work is done.
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // keepIdle connections, once opened, stay open while idle (pg closes idle ones after 10 s): a new one is a new
    // server process, which maps each page of the shared buffers as it first reads it, 50–150 ms for the catalog's first
    // `url` page at 100k listings where a warm connection takes 8 (docs/CATALOG.md "Postgres").
    min: Math.min(options.keepIdle ?? 0, max),
    // How long a connection beyond those kept waits idle before it is closed (pg's default, 10 s, unless set).
    ...(options.idleMs === undefined ? {} : { idleTimeoutMillis: options.idleMs }),
    connectionTimeoutMillis: 5_000,
    allowExitOnIdle: true,
    pipeline: options.pipeline ?? false,
  });
  // An idle client that loses its server emits 'error' on the pool: without a listener that is an
  // uncaught exception. The next query gets a fresh client (or fails, and its caller answers).
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in one transaction on one client (opened by `begin`); rolls back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Runs `work` in one REPEATABLE READ, read-only transaction: every statement sees one snapshot.
 * The answer is returned once `work` has read it, without waiting for the COMMIT: a read-only
 * transaction's commit changes nothing, and each round trip to the database adds its own wait
 * under load (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite", the catalog's list
 * pages). The connection goes back to the pool when the COMMIT is done (discarded if it fails).
 * Nor is the BEGIN waited for on its own: on a pipelined pool (openPool) it goes out with the
 * first statement of `work`, one round trip for both (elsewhere pg sends that statement once BEGIN
 * is answered). An answer read after a BEGIN that failed is not returned: the BEGIN's error is.
 * `work`'s statements answer with their rows taken out of pg's result (rowsTaken).
 */
export async function inReadSnapshot<T>(pool: pg.Pool, work: (db: Pick<pg.PoolClient, 'query'>) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  writeTogether(client);
  let result: T;
  try {
    const begun = client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    begun.catch(() => undefined); // awaited below, once `work` has run
    result = await work({ query: rowsTaken(client.query.bind(client) as Query) });
    await begun;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
    throw err;
  }
  client.query('COMMIT').then(
    () => client.release(),
    (err: Error) => client.release(err),
  );
  return result;
}

/**
 * Holds what `client` writes to its socket until the statements issued in this turn of the event loop are all
 * written, then sends them in one write. On a pipelined pool a read's BEGIN and the statements `work` issues
 * before its first await go out together: pg writes each statement on its own (each a system call, and on the
 * server a wake-up to read it): in a CPU profile of a catalog reader serving list pages from Postgres, its socket
 * writes took 0.45 ms of each page, and 0.22 ms written together.
 */
function writeTogether(client: pg.PoolClient): void {
  const { stream } = (client as unknown as pg.Client).connection;
  stream.cork();
  process.nextTick(() => stream.uncork());
}

/**
 * Runs `work` on one client of a pipelined pool (openPool), no transaction, the statements it issues in each turn of
 * the event loop sent in one write (writeTogether): statements issued together cost one round trip, not one each. They
 * answer with their rows taken out of pg's result (rowsTaken).
 */
export async function onOneClient<T>(pool: pg.Pool, work: (db: Pick<pg.PoolClient, 'query'>) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let corked = false;
  const query = rowsTaken((...args) => {
    if (!corked) {
      corked = true;
      writeTogether(client);
      process.nextTick(() => (corked = false));
    }
    return (client.query as Query)(...args);
  });
  try {
    return await work({ query });
  } finally {
    client.release();
  }
}

type Query = (...args: unknown[]) => Promise<pg.QueryResult>;

/**
 * `query` answering with its rows taken out of pg's result: a finished query's result may still be referred to by an
 * old-generation object that is itself garbage, which V8's young collections cannot see, so every row the result held
 * would survive them and be promoted, to be freed only by a full collection; taken out, the rows die young (on a
 * catalog reader, half the garbage promoted by searches on Postgres: docs/BENCHMARKS.md "Discovery on Postgres beside
 * SQLite").
 */
function rowsTaken(query: Query): pg.PoolClient['query'] {
  return async (...args: unknown[]) => {
    const result = await query(...args);
    const { rows } = result;
    result.rows = [];
    return { ...result, rows };
  };
}

/** Append-only: migration N brings the component from version N-1 to N. */
export type PostgresMigrations = readonly string[];

/**
 * Brings `component` to the newest version `schema` says (src/db/schema-versions.ts stepsFrom: a new database to its
 * baseline first, then each migration since). The advisory lock is held for the transaction, so instances that start
 * at the same moment apply each migration once; a database newer than this code, or older than its baseline, is refused.
 */
export async function migrate(pool: pg.Pool, component: string, schema: Schema<string>): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('svc:migrate'))");
    await client.query('CREATE TABLE IF NOT EXISTS svc_schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const row = await client.query<{ version: number }>('SELECT version FROM svc_schema_versions WHERE component = $1', [component]);
    for (const step of stepsFrom(component, row.rows[0]?.version ?? 0, schema)) await client.query(step);
    await client.query(
      'INSERT INTO svc_schema_versions (component, version) VALUES ($1, $2) ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version',
      [component, latestVersion(schema)],
    );
  });
}

/**
 * `work` on demand, shared: the first call starts it, later calls share its success; a failure
 * (database down at start, or newer than this code) rejects the calls waiting for it and the next
 * call tries again, so svc recovers without a restart once the database is back.
 */
export function untilSucceeded<T>(work: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () =>
    (running ??= work().catch((err: unknown) => {
      running = undefined;
      throw err;
    }));
}

/** A store's migrations on demand (untilSucceeded). */
export function migrationOnDemand(pool: pg.Pool, component: string, schema: Schema<string>): () => Promise<void> {
  return untilSucceeded(() => migrate(pool, component, schema));
}
