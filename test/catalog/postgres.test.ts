/**
 * The catalog shared by several svc instances on one PostgreSQL database (docs/CATALOG.md
 * "Postgres"): two stores with their own pools stand for two instances. Concurrent first
 * settlements of one resource by two sellers leave exactly one owner every time, and the other gets
 * `owned_by_other`; a catalog opened with `databaseUrl` records through the settle hook and answers
 * list and search from its worker threads, and a second instance sees the same listings and honours
 * the first one's cursors. A store whose database is not there yet answers once it is; one whose catalog this code
 * does not open is refused.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openCatalog } from '../../src/catalog/index.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CATALOG_SCHEMA } from '../../src/catalog/postgres/migrations.ts';
import { LAST_FULL_HISTORY } from '../../src/db/schema-versions.ts';
import { inReadSnapshot, openPool } from '../../src/db/postgres.ts';
import { freshDatabase, lateDatabase } from '../helpers/postgres.ts';
import { BUSY_MACHINE_BOUNDS, PAY_TO_A, PAY_TO_B, recordingLogger, settlement } from './fixtures.ts';

function draft(resource: string, owner: string): ListingDraft {
  return {
    resource,
    type: 'http',
    toolName: '',
    owner,
    x402Version: 2,
    terms: { scheme: 'exact', network: 'stellar:testnet', asset: 'CASSET', amount: '100', payTo: owner, maxTimeoutSeconds: 60 },
    metadata: { description: `race listing of ${owner}` },
    bazaar: { info: { input: { type: 'http', method: 'GET' } } },
    parameterText: '',
    dropped: [],
  };
}

describe('two instances on one database', () => {
  let one: PostgresCatalogStore;
  let two: PostgresCatalogStore;
  beforeAll(async () => {
    const url = await freshDatabase();
    [one, two] = await Promise.all([PostgresCatalogStore.open(url), PostgresCatalogStore.open(url)]);
  });
  afterAll(async () => {
    await one?.end();
    await two?.end();
  });

  it('50 races: two sellers settle the same new resource at the same moment, exactly one owns it', async () => {
    const winners = { [PAY_TO_A]: 0, [PAY_TO_B]: 0 };
    const at = new Date('2026-01-01T00:00:00Z');
    for (let trial = 0; trial < 50; trial++) {
      const resource = `https://race${trial}.example.com/r`;
      // Alternate which instance writes which seller, so neither side always starts first.
      const [a, b] = trial % 2 === 0 ? [one, two] : [two, one];
      const outcomes = await Promise.all([a.writeListing(draft(resource, PAY_TO_A), at), b.writeListing(draft(resource, PAY_TO_B), at)]);
      const written = outcomes.filter((o) => o.status === 'written');
      expect(written, `trial ${trial}`).toHaveLength(1);
      expect(
        outcomes.filter((o) => o.status === 'owned_by_other'),
        `trial ${trial}`,
      ).toHaveLength(1);
      const owner = outcomes[0].status === 'written' ? PAY_TO_A : PAY_TO_B;
      winners[owner]++;
      expect(await one.ownerOf(resource, 'http', '')).toBe(owner);
      expect(await two.ownerOf(resource, 'http', '')).toBe(owner);
      // Nothing of the loser was written: one listing, the winner's terms and text only.
      const listed = await two.list({ resource }, { limit: 10, offset: 0 }, new Date());
      expect(listed.total).toBe(1);
      expect(listed.items[0]!.accepts.map((t) => t.payTo)).toEqual([owner]);
      expect(listed.items[0]!.description).toBe(`race listing of ${owner}`);
    }
    expect((await one.list({}, { limit: 1, offset: 0 }, new Date())).total).toBe(50);
    expect((await one.list({ payTo: PAY_TO_A }, { limit: 1, offset: 0 }, new Date())).total).toBe(winners[PAY_TO_A]);
    expect((await one.list({ payTo: PAY_TO_B }, { limit: 1, offset: 0 }, new Date())).total).toBe(winners[PAY_TO_B]);
  }, 60_000);
});

describe('openCatalog({ databaseUrl })', () => {
  it('records settlements through the hook and serves list and search from Postgres; another instance sees the same catalog', async () => {
    const url = await freshDatabase();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const options = {
      dbPath: '/nonexistent/catalog.sqlite',
      databaseUrl: url,
      clock: () => new Date(now),
      ...BUSY_MACHINE_BOUNDS,
    };
    const logger = recordingLogger();
    const first = openCatalog({ ...options, logger });
    const second = openCatalog({ ...options, logger });
    try {
      for (let i = 0; i < 5; i++) {
        now += 1000;
        const outcome = await first.recordSettlement(
          settlement({
            url: `https://w${i}.example.com/weather`,
            serviceName: 'Weather',
            description: `forecast ${i}`,
            queryParams: {},
            paramSchema: {},
          }),
        );
        expect(outcome).toEqual({ status: 'success' });
      }
      // The other instance refuses a squatter: ownership lives in the database.
      expect(await second.recordSettlement(settlement({ url: 'https://w0.example.com/weather', payTo: PAY_TO_B }))).toMatchObject({
        status: 'rejected',
        code: 'bazaar_listing_owned_by_other_payee',
      });

      const listed = await second.list({ payTo: PAY_TO_A }, { limit: 2, offset: 0 });
      expect(listed.pagination).toEqual({ limit: 2, offset: 0, total: 5 });
      expect(listed.items.map((l) => l.resource)).toEqual(['https://w4.example.com/weather', 'https://w3.example.com/weather']);

      const page1 = await first.search('weather forecast', {}, { limit: 3 });
      expect(page1.resources).toHaveLength(3);
      expect(page1.partialResults).toBe(true);
      // A cursor from one instance works on the other (the secret is in the database).
      const page2 = await second.search('weather forecast', {}, { limit: 3, cursor: page1.pagination.cursor! });
      expect(page2).toMatchObject({ partialResults: false, pagination: { limit: 3, cursor: null } });
      expect(page2.resources).toHaveLength(2);
      expect(new Set([...page1.resources, ...page2.resources].map((r) => r.resource)).size).toBe(5);
      expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

describe('a database that is not there yet', () => {
  it('fails the calls while it is missing and serves once it exists (no restart)', async () => {
    const late = lateDatabase();
    const store = new PostgresCatalogStore(late.url);
    try {
      await expect(store.ownerOf('https://late.example.com/r', 'http', '')).rejects.toThrow(/does not exist/);
      await late.create();
      expect(await store.writeListing(draft('https://late.example.com/r', PAY_TO_A), new Date('2026-01-01T00:00:00Z'))).toMatchObject({
        status: 'written',
        created: true,
      });
      expect(await store.ownerOf('https://late.example.com/r', 'http', '')).toBe(PAY_TO_A);
    } finally {
      await store.end();
    }
  });
});

describe('a catalog whose database cannot be reached', () => {
  it('answers discovery svc_catalog_unavailable (503) while it is missing, and serves once it exists (no restart)', async () => {
    const late = lateDatabase();
    const catalog = openCatalog({
      dbPath: '/nonexistent/catalog.sqlite',
      databaseUrl: late.url,
      ...BUSY_MACHINE_BOUNDS,
      logger: recordingLogger(),
    });
    try {
      const refused = await catalog.search('weather', {}, { limit: 5 }).catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: 'svc_catalog_unavailable', status: 503 });
      await late.create();
      await expect(catalog.search('weather', {}, { limit: 5 })).resolves.toMatchObject({ resources: [] });
      // Gone while it served (its connections ended with it): unavailable again, not an internal error.
      const admin = openPool(inject('postgresUrl'), { max: 1 });
      try {
        await admin.query(`DROP DATABASE ${new URL(late.url).pathname.slice(1)} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
      expect(await catalog.search('weather', {}, { limit: 5 }).catch((err: unknown) => err)).toMatchObject({
        code: 'svc_catalog_unavailable',
        status: 503,
      });
    } finally {
      await catalog.close();
    }
  });
});

describe('a read snapshot on a pipelined pool (list pages, src/db/postgres.ts inReadSnapshot)', () => {
  it('sends BEGIN with the first statement, and every statement still reads the one read-only snapshot', async () => {
    const url = await freshDatabase();
    const pipelined = openPool(url, { max: 1, pipeline: true });
    const other = openPool(url, { max: 1 });
    try {
      await other.query('CREATE TABLE snapshot_probe (n INT)');
      const count = async (db: Pick<typeof other, 'query'>) =>
        (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM snapshot_probe')).rows[0]!.n;
      const seen = await inReadSnapshot(pipelined, async (db) => {
        const first = await count(db);
        // Committed by another connection between the page's statements: not in the snapshot.
        await other.query('INSERT INTO snapshot_probe VALUES (1)');
        const { rows } = await db.query<{ isolation: string; readOnly: string }>(
          `SELECT current_setting('transaction_isolation') AS isolation, current_setting('transaction_read_only') AS "readOnly"`,
        );
        return { first, second: await count(db), ...rows[0]! };
      });
      expect(seen).toEqual({ first: 0, second: 0, isolation: 'repeatable read', readOnly: 'on' });
      expect(await count(pipelined)).toBe(1);
      // A statement that fails inside the snapshot rolls it back and gives its error; the connection serves the next.
      await expect(inReadSnapshot(pipelined, (db) => db.query('SELECT * FROM no_such_table'))).rejects.toThrow(/no_such_table/);
      expect(await count(pipelined)).toBe(1);
    } finally {
      await pipelined.end();
      await other.end();
    }
  });
});

describe('a catalog this code does not open', () => {
  it('is refused when older than its baseline or with stem rows still due, and left as it was', async () => {
    const url = await freshDatabase();
    await (await PostgresCatalogStore.open(url)).end();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const version = async () =>
        (await client.query<{ version: number }>("SELECT version FROM svc_schema_versions WHERE component = 'catalog'")).rows[0]!.version;
      await client.query("INSERT INTO catalog_meta (key, value) VALUES ('stem_rows_due', '1')");
      await expect(PostgresCatalogStore.open(url)).rejects.toThrow(
        `the catalog's stem rows are still being derived: start svc at commit ${LAST_FULL_HISTORY} once to finish them`,
      );
      await client.query("DELETE FROM catalog_meta WHERE key = 'stem_rows_due'");
      await client.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [CATALOG_SCHEMA.baseline - 1]);
      await expect(PostgresCatalogStore.open(url)).rejects.toThrow(`older than this code's first (${CATALOG_SCHEMA.baseline})`);
      expect(await version()).toBe(CATALOG_SCHEMA.baseline - 1);
      await client.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [CATALOG_SCHEMA.baseline]);
      await (await PostgresCatalogStore.open(url)).end();
    } finally {
      await client.end();
    }
  });
});
