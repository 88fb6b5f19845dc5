/**
 * The catalog shared by several svc instances on one PostgreSQL database (docs/CATALOG.md
 * "Postgres"): two stores with their own pools stand for two instances. Concurrent first
 * settlements of one resource by two sellers leave exactly one owner every time, and the other gets
 * `owned_by_other`; a catalog opened with `databaseUrl` records through the settle hook and answers
 * list and search from its worker threads, and a second instance sees the same listings and honours
 * the first one's cursors. A store whose database is not there yet answers once it is. Catalog
 * migration 4 fills the term signatures of rows written before it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/index.ts';
import { CATALOG_MIGRATIONS, SCORE_UNITS } from '../../src/catalog/postgres/migrations.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { inReadSnapshot, migrate, openPool } from '../../src/db/postgres.ts';
import { freshDatabase, lateDatabase } from '../helpers/postgres.ts';
import { PAY_TO_A, PAY_TO_B, recordingLogger, settlement } from './fixtures.ts';

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
      readDeadlineMs: 30_000,
      writeDeadlineMs: 30_000,
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
      expect(page2).toMatchObject({ partialResults: false, pagination: { limit: 2, cursor: null } });
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

describe('term signatures (catalog migration 4)', () => {
  it('fills the signatures of rows written before it; rows written without one are looked up; the walk finds every term', async () => {
    const pool = openPool(await freshDatabase(), { max: 1 });
    // A listing's text revision and its term rows, written as an svc before migration 4 writes them.
    const addRevision = (listing: number, seq: number) =>
      pool.query(`INSERT INTO search_revisions (listing_id, from_seq, text_hash) OVERRIDING SYSTEM VALUE VALUES ($1, $2, 'h')`, [
        listing,
        seq,
      ]);
    const addTermRow = (term: string, listing: number, milli: number, seq: number) =>
      pool.query(
        `INSERT INTO search_terms (term, rev, listing_id, units, milli, from_seq)
         SELECT $1, rev, $2, $3::bigint * ${SCORE_UNITS / 1024}, $4, $5 FROM search_revisions WHERE listing_id = $2`,
        [term, listing, Math.round((milli / 1000) * 1024), milli, seq],
      );
    try {
      await migrate(pool, 'catalog', CATALOG_MIGRATIONS.slice(0, 3));
      // Three revisions as migration 3 stored them: listing 1 holds both terms, 2 and 3 one each.
      const rows: Array<[term: string, listing: number, milli: number]> = [
        ['alpha', 1, 600],
        ['beta', 1, 700],
        ['alpha', 2, 900],
        ['beta', 3, 800],
        ['żółw', 3, 500],
      ];
      for (const listing of [1, 2, 3]) await addRevision(listing, 1);
      for (const [term, listing, milli] of rows) await addTermRow(term, listing, milli, 1);
      await pool.query('UPDATE catalog_seq SET seq = 1');

      await migrate(pool, 'catalog', CATALOG_MIGRATIONS);

      const bits = await pool.query<{ term: string; bit: string }>(
        `SELECT q AS term, catalog_term_bit(q) AS bit FROM unnest(ARRAY['alpha', 'beta', 'żółw']) AS q`,
      );
      const bitOf = new Map(bits.rows.map((r) => [r.term, BigInt.asUintN(64, BigInt(r.bit))]));
      // One bit per term.
      for (const bit of bitOf.values()) expect(bit & (bit - 1n)).toBe(0n);
      const stored = await pool.query<{ term: string; listing_id: string; sig: string }>(
        'SELECT term, listing_id, sig FROM search_terms ORDER BY listing_id, term',
      );
      const signatureOf = (listing: number) => rows.filter(([, l]) => l === listing).reduce((sig, [term]) => sig | bitOf.get(term)!, 0n);
      expect(stored.rows.map((r) => [r.term, Number(r.listing_id), BigInt.asUintN(64, BigInt(r.sig))])).toEqual(
        [...rows].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([term, listing]) => [term, listing, signatureOf(listing)]),
      );

      // Listing 1 ranks first with both terms (2 × 1e6 + 1300): its other term was looked up.
      const walked = await pool.query<{ listing_ids: string[]; ranks: string[] }>(
        `SELECT * FROM catalog_walk(ARRAY['alpha', 'beta'], 1, 4, NULL, NULL, 20000, '{32,64,128}'::int[])`,
      );
      expect(walked.rows[0]!.listing_ids.map(Number)).toEqual([1, 2, 3]);
      expect(walked.rows[0]!.ranks.map(Number)).toEqual([2_001_300, 1_000_900, 1_000_800]);

      // An svc that predates migration 4 (a fleet mid-upgrade) writes term rows without a
      // signature: they get every bit, so the walk looks their other terms up.
      await addRevision(4, 2);
      await addTermRow('alpha', 4, 950, 2);
      await addTermRow('beta', 4, 950, 2);
      await pool.query('UPDATE catalog_seq SET seq = 2');
      const after = await pool.query<{ listing_ids: string[]; ranks: string[] }>(
        `SELECT * FROM catalog_walk(ARRAY['alpha', 'beta'], 2, 4, NULL, NULL, 20000, '{32,64,128}'::int[])`,
      );
      expect(after.rows[0]!.listing_ids.map(Number)).toEqual([4, 1, 2, 3]);
      expect(Number(after.rows[0]!.ranks[0])).toBe(2_001_900);
    } finally {
      await pool.end();
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
