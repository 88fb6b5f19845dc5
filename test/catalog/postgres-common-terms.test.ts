/**
 * The common-term masks on PostgreSQL (catalog migration 21: src/catalog/postgres/common-terms.ts,
 * common-terms-scan.ts; docs/CATALOG.md "Search" and "Postgres") against SQLite's (migration 16).
 * A real Postgres database written by two store instances (as two svc instances), a real SQLite
 * file written with the same drafts, the threshold lowered to 300 revisions on both: none chosen
 * below it; the write past it (two instances writing at that moment) chooses once, the same 16
 * terms as SQLite; every revision's mask and sum are those of its term rows, after re-settles too;
 * queries of 7 and 8 chosen words read the masks and give SQLite's pages, cursor walks included,
 * also for revisions whose mask is unknown (written by an svc before migration 21).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMON_TERMS } from '../../src/catalog/common-terms.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { searchPostgres } from '../../src/catalog/postgres/search.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';
import { openPool } from '../../src/db/postgres.ts';
import { freshCatalogDatabase, recordingDb } from '../helpers/postgres.ts';
import { PAY_TO_A, PAY_TO_B, seededRandom, tempDir } from './fixtures.ts';
import { walkPages, windowWalkError } from './reference-ranking.ts';

const CHOSEN_AT = 300;
const rand = seededRandom(0x5eed21);
const WORDS = Array.from({ length: 20 }, (_, k) => `word${String.fromCharCode(97 + k)}`);

/** A listing whose description holds each word with a falling chance, so the words' row counts differ. */
function draft(i: number, version = 0): ListingDraft {
  const words = WORDS.filter((_, k) => rand() < 0.95 - k * 0.04);
  return {
    resource: `https://api.example.com/r${i}`,
    type: i % 5 === 0 ? 'mcp' : 'http',
    toolName: i % 5 === 0 ? 'tool' : '',
    owner: i % 3 === 0 ? PAY_TO_B : PAY_TO_A,
    x402Version: 2,
    terms: {
      scheme: 'exact',
      network: 'stellar:testnet',
      asset: 'CASSET',
      amount: '100',
      payTo: i % 3 === 0 ? PAY_TO_B : PAY_TO_A,
      maxTimeoutSeconds: 60,
    },
    metadata: { description: `listing ${i} v${version} ${words.join(' ')}`, ...(rand() < 0.3 ? { tags: words.slice(0, 3) } : {}) },
    bazaar: { info: { input: { type: 'http', method: 'GET' } } },
    parameterText: '',
    dropped: [],
  };
}

/** The revisions whose mask or sum differs from what their term rows give, on Postgres. */
const WRONG_MASKS = `SELECT r.rev FROM search_revisions r
  LEFT JOIN (SELECT t.rev, bit_or(1 << c.term_bit) AS mask, sum(t.milli) AS milli
             FROM search_terms t JOIN search_common_terms c ON c.term = t.term GROUP BY t.rev) s ON s.rev = r.rev
  WHERE r.common_mask <> coalesce(s.mask, 0) OR r.common_milli <> coalesce(s.milli, 0)`;

const dir = tempDir();
const sqlite = new CatalogStore(`${dir.dir}/catalog.sqlite`, { commonTermsChosenAt: CHOSEN_AT });
let url: string;
let first: PostgresCatalogStore;
let second: PostgresCatalogStore;
let pool: ReturnType<typeof openPool>;
const start = Date.parse('2026-01-01T00:00:00Z');
let clock = 0;
const at = () => new Date(start + ++clock * 1000);

beforeAll(async () => {
  url = await freshCatalogDatabase();
  first = await PostgresCatalogStore.open(url, { commonTermsChosenAt: CHOSEN_AT });
  second = await PostgresCatalogStore.open(url, { commonTermsChosenAt: CHOSEN_AT });
  pool = openPool(url, { max: 2 });
});
afterAll(async () => {
  sqlite.close();
  await first?.end();
  await second?.end();
  await pool?.end();
  dir.cleanup();
});

const chosenOnPostgres = async () =>
  (await pool.query<{ term: string }>('SELECT term FROM search_common_terms ORDER BY term_bit')).rows.map((r) => r.term);
const chosenOnSqlite = () =>
  sqlite.db
    .prepare('SELECT term FROM search_common_terms ORDER BY bit')
    .all()
    .map((r) => (r as { term: string }).term);
const comparable = (page: SearchPage) => ({ ...page, pagination: { ...page.pagination, cursor: page.pagination.cursor !== null } });

describe('common-term masks on Postgres', () => {
  it('none chosen below the threshold; the write past it (two instances writing) chooses the same 16 as SQLite; masks right after re-settles', async () => {
    for (let i = 0; i < CHOSEN_AT - 1; i++) {
      const d = draft(i);
      const when = at();
      expect(sqlite.writeListing(d, when).status).toBe('written');
      expect((await (i % 2 ? second : first).writeListing(d, when)).status).toBe('written');
    }
    expect(await chosenOnPostgres()).toEqual([]);
    expect((await pool.query('SELECT count(*)::int AS n FROM search_revisions WHERE common_mask <> 0')).rows[0].n).toBe(0);
    // Both instances write at once, the 300th and 301st revisions: the one that takes the sequence
    // second finds the catalog at the threshold (the other's revision committed) and chooses, from
    // those 300 revisions, as SQLite's 301st write does.
    // A new listing and a re-settle of an older one (so the listing ids do not depend on which
    // instance goes first: ties in rank break on them), holding the same words but their number,
    // so the 300 revisions before the choice hold the same rows whichever goes first.
    const twin = draft(CHOSEN_AT - 1);
    const resettled = 7;
    expect([resettled % 3 === 0, resettled % 5 === 0]).toEqual([(CHOSEN_AT - 1) % 3 === 0, (CHOSEN_AT - 1) % 5 === 0]); // same owner and type
    const pair = [
      twin,
      {
        ...twin,
        resource: `https://api.example.com/r${resettled}`,
        metadata: { description: twin.metadata.description!.replace(`listing ${CHOSEN_AT - 1} `, `listing ${resettled} `) },
      },
    ];
    const when = at();
    expect(sqlite.writeListing(pair[0]!, when).status).toBe('written');
    expect(chosenOnSqlite()).toEqual([]);
    expect(sqlite.writeListing(pair[1]!, when).status).toBe('written');
    const written = await Promise.all([first.writeListing(pair[0]!, when), second.writeListing(pair[1]!, when)]);
    expect(written.map((w) => w.status)).toEqual(['written', 'written']);
    const chosen = await chosenOnPostgres();
    expect(chosen.length).toBe(COMMON_TERMS);
    expect(chosen).toEqual(chosenOnSqlite());
    expect(chosen.filter((term) => WORDS.includes(term)).length).toBeGreaterThanOrEqual(COMMON_TERMS - 2);
    expect((await pool.query(WRONG_MASKS)).rows).toEqual([]);
    // More listings, then re-settles with new text (a new revision each, the old one superseded).
    for (let i = CHOSEN_AT + 1; i < CHOSEN_AT + 60; i++) {
      const d = draft(i);
      const w = at();
      sqlite.writeListing(d, w);
      await (i % 2 ? second : first).writeListing(d, w);
    }
    for (let k = 0; k < 60; k++) {
      const i = Math.floor(rand() * (CHOSEN_AT + 60));
      const d = draft(i, k + 1);
      const w = at();
      expect(sqlite.writeListing(d, w).status).toBe('written');
      expect((await (k % 2 ? second : first).writeListing(d, w)).status).toBe('written');
    }
    expect(await chosenOnPostgres()).toEqual(chosen);
    const superseded = await pool.query('SELECT count(*)::int AS n FROM search_revisions WHERE to_seq IS NOT NULL');
    expect(superseded.rows[0].n).toBeGreaterThan(40);
    expect((await pool.query(WRONG_MASKS)).rows).toEqual([]);
    // The revisions' masks and sums are SQLite's (the same writes; the pair may have taken its revs in either order).
    const masksOf = (rows: Array<{ mask: unknown; milli: unknown }>) => rows.map((r) => `${Number(r.mask)}:${Number(r.milli)}`).sort();
    const onSqlite = sqlite.db.prepare('SELECT common_mask AS mask, common_milli AS milli FROM search_revisions').all();
    const onPostgres = await pool.query<{ mask: number; milli: string }>(
      'SELECT common_mask AS mask, common_milli AS milli FROM search_revisions',
    );
    expect(masksOf(onPostgres.rows)).toEqual(masksOf(onSqlite as Array<{ mask: unknown; milli: unknown }>));
    expect(onPostgres.rows.filter((r) => Number(r.mask) !== 0).length).toBeGreaterThan(CHOSEN_AT);
  }, 120_000);

  it("queries of 7 and 8 chosen words read the masks and give SQLite's pages and cursor walks, with filters, and with unknown masks", async () => {
    const chosen = await chosenOnPostgres();
    expect(chosen.length).toBe(COMMON_TERMS);
    const statements: string[] = [];
    const recording = recordingDb(pool, statements);
    // The driver cap at 0: on this small catalog the tiers read from the rarest terms (term-tiers.ts) would take 8 words.
    // The text paths under filters, not the set driver (postgres/filter-driver.ts).
    const context = { secret: Buffer.alloc(32, 7), db: recording, tierFirstMinRows: 0, tierDriverRows: 0, filterDriverListings: 0 };
    const now = new Date(start + 10_000_000);
    const walk = async (text: string, filters: DiscoveryFilters, limit: number) => {
      let cursorA: string | undefined;
      let cursorB: string | undefined;
      let full = false;
      for (let pages = 1; pages <= 30; pages++) {
        const a = sqlite.search(text, filters, { limit, ...(cursorA ? { cursor: cursorA } : {}) }, now, 2);
        const b = await searchPostgres(context, text, filters, { limit, ...(cursorB ? { cursor: cursorB } : {}) }, now, 2);
        expect(comparable(b), `${text} ${JSON.stringify(filters)} page ${pages}`).toEqual(comparable(a));
        if (pages === 1) full = a.resources.length === limit;
        if (!a.pagination.cursor) break;
        cursorA = a.pagination.cursor;
        cursorB = b.pagination.cursor!;
      }
      return full;
    };
    // 8 chosen words (a query's most): the 6 most common with two others, varied; every third
    // query 7 of them (MASK_SCAN_TERMS: on Postgres the masks, on SQLite the revision scan).
    const queries = (round: number) =>
      Array.from({ length: 12 }, (_, q) => {
        const a = (q + round) % 10;
        const b = (a + 1 + ((q * 3 + round) % 9)) % 10;
        return [...chosen.slice(0, 6), chosen[6 + a]!, chosen[6 + b]!].slice(q % 3 === 2 ? 1 : 0).join(' ');
      });
    const check = async (round: number) => {
      let full = 0;
      let maskScans = 0;
      for (const [q, text] of queries(round).entries()) {
        statements.length = 0;
        const filters: DiscoveryFilters = [{}, {}, { type: 'http' }, { payTo: PAY_TO_B }][q % 4]!;
        if (await walk(text, filters, [1, 3, 5, 10][q % 4]!)) full++;
        if (statements.some((s) => s.includes('t.common_mask = ANY('))) maskScans++;
      }
      expect(full).toBeGreaterThan(5);
      expect(maskScans).toBe(12);
    };
    await check(0);
    // Revisions written by an svc before migration 21 carry the defaults (an unknown mask): among
    // them the best holding the 6 most common words (every query's), which must still be found and ranked.
    const best = await pool.query<{ rev: string }>(
      `SELECT rev FROM search_revisions WHERE to_seq IS NULL AND common_mask & $1 = $1 ORDER BY common_milli DESC, rev LIMIT 40`,
      [(1 << 6) - 1],
    );
    expect(best.rows.length).toBe(40);
    await pool.query('UPDATE search_revisions SET common_mask = DEFAULT, common_milli = DEFAULT WHERE rev = ANY($1::bigint[])', [
      best.rows.map((r) => r.rev),
    ]);
    expect((await pool.query('SELECT count(*)::int AS n FROM search_revisions WHERE common_mask = -1')).rows[0].n).toBe(40);
    await check(1);
  }, 120_000);

  /**
   * A filtered search that neither its text nor its filters narrow (docs/CATALOG.md "Search with filters"): with the
   * budget lowered to 60 rows and no set driving, two chosen words under a filter rank the window of each word's first
   * 30 rows (postgres/filter-driver.ts windowRows). Against SQLite's exact order (its set driver): a page that cannot
   * be sure of the window says `text_partial`; every other page is exact, and a walk's ids keep the exact order.
   */
  it('two chosen words under a filter past a budget of 60 rows: the window pages, exact or flagged partial', async () => {
    const chosen = await chosenOnPostgres();
    const context = { secret: Buffer.alloc(32, 7), db: pool, searchRowBudget: 60, filterDriverListings: 0 };
    const now = new Date(start + 10_000_000);
    const idOf = (item: unknown) => Number(/r(\d+)$/.exec((item as { resource: string }).resource)![1]);
    let partial = 0;
    for (const [q, [a, b]] of (
      [
        [0, 1],
        [3, 9],
        [12, 15],
      ] as const
    ).entries()) {
      const text = `${chosen[a]} ${chosen[b]}`;
      const filters: DiscoveryFilters = q % 2 === 0 ? { payTo: PAY_TO_B } : { type: 'mcp' };
      const expected = sqlite.search(text, filters, { limit: 1000 }, now, 2).resources.map(idOf);
      for (const limit of [5, 20]) {
        const pages = await walkPages(idOf, (page) => searchPostgres(context, text, filters, page, now, 2), limit, 40);
        expect(windowWalkError(pages, expected), `${text} ${JSON.stringify(filters)} pages of ${limit}`).toBeUndefined();
        if (pages.some((page) => page.partial)) partial++;
      }
    }
    expect(partial).toBeGreaterThan(0);
  }, 60_000);
});
