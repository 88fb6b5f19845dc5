/**
 * The `url` filter's bounded list page (src/catalog/url-filter.ts, docs/CATALOG.md "List") against a plain scan, on both
 * stores, with the bounds lowered so a small random catalog takes both ways: a substring few listings hold is read from
 * the index (Postgres' suffixes or its trigram index; exact page and total, `partialResults` false); one more listings
 * hold is the matches a walk in page order finds, up to the page and one more among the first listings holding the
 * other filters' rarest list key (`partialResults` true unless the walk checked every such listing). Other filters (a
 * price among them), any letter case, offsets past the matches, listings hidden by age, and listings failing their
 * liveness checks (a walk counts them among the listings it read, and shows none).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { filterKeys, type ListingKey } from '../../src/catalog/listing.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { listBySelectiveFilter } from '../../src/catalog/postgres/list-index.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters, DiscoveryResource } from '../../src/catalog/types.ts';
import { URL_LETTERS_KEYED_MIGRATION, freshSample, urlLetters } from '../../src/catalog/postgres/url-probe.ts';
import { CATALOG_MIGRATIONS } from '../../src/catalog/postgres/migrations.ts';
import { UrlSample, asciiLower } from '../../src/catalog/url-filter.ts';
import { SUFFIX_LENGTH } from '../../src/catalog/postgres/url-suffixes.ts';
import { urlMatchesUpTo } from '../../src/catalog/sqlite/url-probe.ts';
import { freshCatalogDatabase } from '../helpers/postgres.ts';
import { caseRandom } from '../helpers/cases.ts';
import { PAY_TO_A, PAY_TO_B, seededRandom, tempDir } from './fixtures.ts';

const CAP = 25;
const BUDGET = 150;
/** The most matches a walk is joined to on "Postgres by windows": substrings more hold are walked in parts there. */
const JOIN_CAP = 100;
const LISTINGS = 400;
const rand = seededRandom(0x5eed_0053);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const HOSTS = ['api.weather.example.com', 'maps.example.org', 'tools.Data.example', 'x402.pay.example.net'];
const SEGMENTS = ['v1', 'Forecast', 'geo', 'city', 'price', 'tiles', 'DATA', 'search', '50%25_off'];

function draft(i: number): ListingDraft {
  const type = rand() < 0.8 ? ('http' as const) : ('mcp' as const);
  const owner = rand() < 0.6 ? PAY_TO_A : PAY_TO_B;
  const path = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(SEGMENTS)).join('/');
  return {
    resource: `https://${rand() < 0.3 ? `n${i}.` : ''}${pick(HOSTS)}/${path}/${i}`,
    type,
    toolName: type === 'mcp' ? 'tool' : '',
    owner,
    x402Version: 2,
    terms: {
      scheme: 'exact',
      network: pick(['stellar:testnet', 'stellar:pubnet']),
      asset: 'CASSET',
      amount: pick(['100', '5000']),
      payTo: owner,
      maxTimeoutSeconds: 60,
    },
    metadata: { description: 'a listing' },
    bazaar: { info: { input: { type } } },
    parameterText: '',
    dropped: [],
  };
}

const dir = tempDir();
const sqlite = new CatalogStore(`${dir.dir}/catalog.sqlite`, { urlIndexCap: CAP, urlWalkBudget: BUDGET });
let postgres: PostgresCatalogStore;
/**
 * The same database, its spelled URLs always read by their windows (the uncommon ones asked beside the two rarest, as
 * at 1M listings) and a walk joined to them when at most JOIN_CAP hold the substring, else walked in parts
 * (src/catalog/postgres/url-probe.ts, list-index.ts).
 */
let postgresByWindows: PostgresCatalogStore;
/**
 * The same database, every scan of its spelled URLs stopped at its first (url-probe.ts SCAN_BOUND), where the index
 * answers; and every scan reading all of them.
 */
let postgresScansCutShort: PostgresCatalogStore;
let postgresScansWhole: PostgresCatalogStore;
/**
 * The same database, one suffix entry read per listing looked for (src/catalog/postgres/url-probe.ts spelledCte): a
 * substring that a URL holds twice leaves the range unread, and the trigram index answers.
 */
let postgresFewSuffixes: PostgresCatalogStore;
/**
 * The same database, its suffixes read (four entries per listing) and a walk joined to the matches whenever at most
 * JOIN_CAP hold the substring: to the ids the suffixes named when they named every match, else to the spelled matches.
 */
let postgresJoinedBySuffixes: PostgresCatalogStore;
/** Each Postgres listing's id, by its resource URL (unique here): the suffixes' index is ordered by suffix, then id. */
let listingIds: Map<string, number>;
let databaseUrl: string;
const now = new Date('2026-02-01T00:00:00Z');
/** The listings failing their liveness checks since before this time are hidden: the pages below hide those failing since FAILED_AT. */
const FAILING_BEFORE = '2026-01-20T00:00:00.000Z';
const FAILED_AT = '2026-01-10T00:00:00.000Z';
/** About a tenth of the listings fail (each draft's URL ends in its number), on both stores alike. */
const FAILING_LISTINGS = `UPDATE listings SET liveness_failing_since = '${FAILED_AT}' WHERE resource LIKE '%3'`;

beforeAll(async () => {
  databaseUrl = await freshCatalogDatabase();
  // A walk is joined to at most the cap's matches, so every statement reads the suffixes for the cap and one more.
  postgres = await PostgresCatalogStore.open(databaseUrl, { urlIndexCap: CAP, urlWalkBudget: BUDGET, urlJoinCap: CAP });
  sqlite.db.exec('BEGIN IMMEDIATE');
  let at = Date.parse('2026-01-01T00:00:00Z');
  const drafts = Array.from({ length: LISTINGS }, (_, i) => draft(i));
  // Every listing written, then a fifth written again later (settled again: it moves to the front of page order).
  for (const d of [...drafts, ...drafts.filter(() => rand() < 0.2)]) {
    // Ties in lastUpdated break on id.
    if (rand() < 0.5) at += 1000;
    const written = postgres.writeListing(d, new Date(at));
    expect(sqlite.writeListing(d, new Date(at)).status).toBe((await written).status);
  }
  sqlite.db.exec(FAILING_LISTINGS);
  sqlite.db.exec('COMMIT');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(FAILING_LISTINGS);
  listingIds = new Map(
    (await client.query<{ id: string; resource: string }>('SELECT id, resource FROM listings')).rows.map((r) => [r.resource, Number(r.id)]),
  );
  await client.end();
  postgresByWindows = await PostgresCatalogStore.open(databaseUrl, {
    urlIndexCap: CAP,
    urlWalkBudget: BUDGET,
    urlScannedShare: 2,
    urlWalkedByIndexShare: 2,
    urlJoinCap: JOIN_CAP,
    urlMoreWindowsFrom: 0,
    urlSuffixRowsPerMatch: 0,
  });
  const scans = { urlIndexCap: CAP, urlWalkBudget: BUDGET, urlSuffixRowsPerMatch: 0 };
  postgresScansCutShort = await PostgresCatalogStore.open(databaseUrl, { ...scans, urlScanBound: 1e-9 });
  postgresScansWhole = await PostgresCatalogStore.open(databaseUrl, { ...scans, urlScanBound: 1e9 });
  postgresFewSuffixes = await PostgresCatalogStore.open(databaseUrl, {
    urlIndexCap: CAP,
    urlWalkBudget: BUDGET,
    urlJoinCap: CAP,
    urlSuffixRowsPerMatch: 1,
  });
  postgresJoinedBySuffixes = await PostgresCatalogStore.open(databaseUrl, {
    urlIndexCap: CAP,
    urlWalkBudget: BUDGET,
    urlWalkedByIndexShare: 2,
    urlJoinCap: JOIN_CAP,
  });
}, 120_000);
afterAll(async () => {
  sqlite.close();
  await postgres?.end();
  await postgresByWindows?.end();
  await postgresScansCutShort?.end();
  await postgresScansWhole?.end();
  await postgresFewSuffixes?.end();
  await postgresJoinedBySuffixes?.end();
  dir.cleanup();
});

const stores = () =>
  [
    ['SQLite', sqlite],
    ['Postgres', postgres],
    ['Postgres by windows', postgresByWindows],
    ['Postgres, scans cut short', postgresScansCutShort],
    ['Postgres, scans whole', postgresScansWhole],
    ['Postgres, few suffixes read', postgresFewSuffixes],
    ['Postgres joined by suffixes', postgresJoinedBySuffixes],
  ] as const;

/** How many suffix entries each Postgres store reads per listing looked for (the trigram index alone at 0). */
const SUFFIX_ROWS: Record<string, number> = {
  Postgres: 4,
  'Postgres by windows': 0,
  'Postgres, scans cut short': 0,
  'Postgres, scans whole': 0,
  'Postgres, few suffixes read': 1,
  'Postgres joined by suffixes': 4,
};

/**
 * What a Postgres store's cap counts for `url` (src/catalog/postgres/url-probe.ts spelledCte), looking for `limit`
 * listings and reading `perMatch` suffix entries for each: the listings holding `url` when its suffixes' range tells
 * (a short `url` that `limit` listings of the entries read hold, or a range read whole); else those whose URL spelled
 * in letters holds its spelling (every one holding it, and rarely a few more: the trigram index's).
 */
function postgresCounted(
  everything: DiscoveryResource[],
  url: string,
  perMatch: number,
  limit: number,
): { counted: number; way: 'held by the limit' | 'range read whole' | 'trigram index' } {
  const chars = Array.from(asciiLower(url));
  const kept = chars.slice(0, SUFFIX_LENGTH).join('');
  const entries: Array<{ suffix: string; id: number }> = [];
  for (const item of everything) {
    const resource = Array.from(asciiLower(item.resource));
    const suffixes = new Set(resource.map((_, i) => resource.slice(i, i + SUFFIX_LENGTH).join('')));
    for (const suffix of suffixes) if (suffix.startsWith(kept)) entries.push({ suffix, id: listingIds.get(item.resource)! });
  }
  entries.sort((x, y) => (x.suffix < y.suffix ? -1 : x.suffix > y.suffix ? 1 : x.id - y.id));
  const rows = limit * perMatch;
  const read = new Set(entries.slice(0, rows).map((entry) => entry.id)).size;
  const exact = everything.filter((item) => holds(item, url)).length;
  if (chars.length <= SUFFIX_LENGTH && read >= limit) return { counted: exact, way: 'held by the limit' };
  if (entries.length < rows) return { counted: exact, way: 'range read whole' };
  return { counted: everything.filter((item) => urlLetters(item.resource).includes(urlLetters(url))).length, way: 'trigram index' };
}

/** Whether `item`'s resource URL holds `url`, ignoring case: what the `url` filter means. */
const holds = (item: DiscoveryResource, url: string) => item.resource.toLowerCase().includes(url.toLowerCase());

/** The filters a list key stands for (src/catalog/listing.ts filterKeys): `network+asset` is `network` and `asset`. */
function keyFilters(key: ListingKey): DiscoveryFilters {
  if (key.kind === 'all') return {};
  const values = key.value.split('\n');
  return Object.fromEntries(key.kind.split('+').map((kind, i) => [kind, values[i]]));
}

/**
 * Every listing of `filters` in page order (the list without `url`, paged through), those before `visibleSince` left out,
 * and those failing since before `failingBefore`.
 */
async function scan(
  store: CatalogStore | PostgresCatalogStore,
  filters: DiscoveryFilters,
  visibleSince?: string,
  failingBefore?: string,
): Promise<DiscoveryResource[]> {
  const out: DiscoveryResource[] = [];
  for (let offset = 0; ; offset += 100) {
    const { items } = await store.list(filters, { limit: 100, offset }, now, visibleSince, failingBefore);
    out.push(...items);
    if (items.length < 100) return out;
  }
}

describe('url on a list page, bounded, against a plain scan', () => {
  const caseRand = caseRandom('url-walk');
  it("pages and totals are the scan's: exact from the index, or the matches a walk of the first listings finds", async () => {
    const everything = await scan(sqlite, {});
    expect(everything.length).toBe(LISTINGS);
    // Half the pages leave out the listings last written before the median's time (a list's LISTING_TTL_DAYS): the
    // walk's range then ends at its last entry, not at that time.
    const visibleSince = [...everything].sort((x, y) => x.lastUpdated.localeCompare(y.lastUpdated))[LISTINGS / 2]!.lastUpdated;
    const sinces = [undefined, visibleSince];
    // 'aexample': no URL holds it, every spelled URL holds its spelling ('.example' is 'qaexample'); so do a few
    // hold 'aweather.example.com/v1''s ('api.weather.example.com/v1'), which Postgres reads from its index.
    const urls = [
      'https://',
      'EXAMPLE',
      'forecast',
      '50%25_',
      'weather.example.com/v1',
      'nowhere',
      '%_o',
      'aexample',
      'aweather.example.com/v1',
      // Longer than the suffixes Postgres keeps (src/catalog/postgres/url-suffixes.ts): found by their first characters.
      'API.weather.example.com/v1/Forecast',
      'https://maps.example.org/geo',
      'aweather.example.com/v1/Forecast',
    ];
    for (let n = 0; n < 24; n++) {
      const from = everything[Math.floor(caseRand() * everything.length)]!.resource;
      const length = 3 + Math.floor(caseRand() * 14);
      const start = Math.floor(caseRand() * (from.length - length));
      const part = from.slice(start, start + length);
      urls.push(caseRand() < 0.5 ? part.toUpperCase() : part);
    }
    const others: DiscoveryFilters[] = [
      {},
      { type: 'mcp' },
      { payTo: PAY_TO_B, network: 'stellar:pubnet' },
      { asset: 'CASSET', network: 'stellar:testnet', type: 'http' },
      { asset: 'CASSET', maxAmount: '1000', type: 'mcp' },
    ];
    // A walk reads the listings holding the other filters' list key that the fewest hold (on a tie the first of
    // filterKeys'; `all` without one), in page order.
    // And each filter set's listings, which the matches are drawn from.
    // The walk's key is chosen by its listings of every age.
    const walkable = new Map<string, DiscoveryResource[]>();
    const allowedBy = new Map<string, Set<string>>();
    const visible = new Map<string | undefined, DiscoveryResource[]>();
    for (const since of sinces) {
      visible.set(since, await scan(sqlite, {}, since));
      for (const other of others) {
        const held = await Promise.all(
          filterKeys(other).map(async (key) => ({
            key,
            n: (await scan(sqlite, keyFilters(key))).length,
            listings: await scan(sqlite, keyFilters(key), since),
          })),
        );
        held.sort((x, y) => x.n - y.n);
        walkable.set(`${since}${JSON.stringify(other)}`, held[0]!.listings);
        const shown = await scan(sqlite, other, since, FAILING_BEFORE);
        allowedBy.set(`${since}${JSON.stringify(other)}`, new Set(shown.map((item) => item.resource)));
      }
    }
    const ways = new Set<boolean>();
    const suffixWays = new Map<string, Set<string>>(Object.keys(SUFFIX_ROWS).map((name) => [name, new Set()]));
    for (const url of urls) {
      // What each store's cap counts: the listings holding `url`; on Postgres, as postgresCounted says.
      const held = everything.filter((item) => holds(item, url)).length;
      // Each store looks for the cap's listings and one more; one that joins its walks, where the page has other filters
      // (a walked key), for JOIN_CAP and one more.
      const countedFor = (name: string, limit: number) => {
        const { counted, way } = postgresCounted(everything, url, SUFFIX_ROWS[name]!, limit);
        suffixWays.get(name)!.add(way);
        return counted;
      };
      const counted = new Map(Object.keys(SUFFIX_ROWS).map((name) => [name, countedFor(name, CAP + 1)]));
      const joinedCount = countedFor('Postgres joined by suffixes', JOIN_CAP + 1);
      const since = caseRand() < 0.5 ? undefined : visibleSince;
      for (const other of others) {
        const allowed = allowedBy.get(`${since}${JSON.stringify(other)}`)!;
        const walkedKey = walkable.get(`${since}${JSON.stringify(other)}`)!;
        for (const page of [
          { limit: 10, offset: 0 },
          { limit: 7, offset: 12 },
          { limit: 5, offset: 200 },
          // Past a 32-bit integer (openapi.yaml allows offsets up to 2^53 - 1): an empty page with the total, not a fault.
          { limit: 3, offset: 2 ** 31 },
        ]) {
          for (const [name, store] of stores()) {
            const joins = name === 'Postgres joined by suffixes' && filterKeys(other)[0]!.kind !== 'all';
            const indexed = name === 'SQLite' ? held : joins ? joinedCount : counted.get(name)!;
            const walked = indexed <= CAP ? visible.get(since)! : walkedKey.slice(0, BUDGET);
            const all = walked.filter((item) => holds(item, url) && allowed.has(item.resource)).map((item) => item.resource);
            // The walk stops once it has the page and one more match.
            const want = page.offset + page.limit + 1;
            const matches = indexed <= CAP ? all : all.slice(0, want);
            const partialResults = indexed > CAP && (matches.length === want || walkedKey.length > BUDGET);
            ways.add(partialResults);
            const got = await store.list({ ...other, url }, page, now, since, FAILING_BEFORE);
            expect({
              name,
              url,
              since,
              other,
              page,
              items: got.items.map((item) => item.resource),
              total: got.total,
              partialResults: got.partialResults,
            }).toEqual({
              name,
              url,
              since,
              other,
              page,
              items: matches.slice(page.offset, page.offset + page.limit),
              total: matches.length,
              partialResults,
            });
          }
        }
      }
    }
    expect([...ways].sort()).toEqual([false, true]);
    // Each way of reading the suffixes was taken (src/catalog/postgres/url-probe.ts spelledCte).
    expect([...suffixWays.get('Postgres')!].sort()).toEqual(['held by the limit', 'range read whole']);
    expect(suffixWays.get('Postgres, few suffixes read')!.has('trigram index')).toBe(true);
    expect(suffixWays.get('Postgres by windows')).toEqual(new Set(['trigram index']));
  }, 120_000);
});

describe("SQLite's url set for a search (src/catalog/sqlite/url-probe.ts urlMatchesUpTo)", () => {
  it('is every match when at most the cap hold the substring, and none past it; a common one is not asked', async () => {
    const everything = await scan(sqlite, {});
    const caseRand = caseRandom('url-set');
    const urls = ['EXAMPLE', 'https://', 'forecast', 'nowhere', '%_o', 'maps.example.org/geo'];
    for (let n = 0; n < 30; n++) {
      const from = everything[Math.floor(caseRand() * everything.length)]!.resource;
      const length = 3 + Math.floor(caseRand() * 14);
      const start = Math.floor(caseRand() * (from.length - length));
      urls.push(from.slice(start, start + length));
    }
    // Substrings just past the cap, which the sample leaves to the index: its cap must say no.
    const heldBy = (url: string) => everything.filter((item) => holds(item, url));
    for (let n = 0, added = 0; n < 2000 && added < 5; n++) {
      const from = everything[Math.floor(caseRand() * everything.length)]!.resource;
      const start = Math.floor(caseRand() * (from.length - 4));
      const part = from.slice(start, start + 3 + Math.floor(caseRand() * 2));
      const k = heldBy(part).length;
      if (k <= CAP || k > CAP * 1.2 || urls.includes(part)) continue;
      urls.push(part);
      added++;
    }
    expect(urls.filter((url) => heldBy(url).length > CAP).length).toBeGreaterThan(0);
    const found = new Set<string>();
    for (const url of urls) {
      const held = heldBy(url);
      const got = urlMatchesUpTo(sqlite.db, url, CAP);
      if (held.length > CAP) expect({ url, got }).toEqual({ url, got: undefined });
      if (got === undefined) {
        // Left to the per-row check: past the cap, or (by the sample) common.
        found.add(held.length > CAP ? 'past the cap' : 'common by the sample');
        continue;
      }
      found.add('a set');
      const resources = (
        sqlite.db.prepare('SELECT resource FROM listings WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(got)) as Array<{
          resource: string;
        }>
      ).map((r) => r.resource);
      expect({ url, resources: resources.sort() }).toEqual({
        url,
        resources: held.map((item) => item.resource).sort(),
      });
    }
    expect(found.has('a set') && found.has('past the cap')).toBe(true);
  });
});

describe("Postgres' URLs spelled in letters (the trigram index of catalog migration 30)", () => {
  it('urlLetters spells any text as catalog_url_letters does', async () => {
    const caseRand = caseRandom('url-letters');
    const alphabet = ['a', 'Q', 'q', 'z', '0', '9', '.', '/', ':', '-', '_', '%', '?', '=', '~', ' ', 'é', 'É', 'İ', 'ß', '😀', '\\', "'"];
    const texts = ['https://API.Example.com/v1?q=a_b-c%20d', 'QqQ', ''];
    for (let n = 0; n < 200; n++)
      texts.push(
        Array.from({ length: 1 + Math.floor(caseRand() * 12) }, () => alphabet[Math.floor(caseRand() * alphabet.length)]!).join(''),
      );
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const spelled = await client.query<{ s: string }>(
        'SELECT catalog_url_letters(t) AS s FROM unnest($1::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n',
        [texts],
      );
      expect(spelled.rows.map((r) => r.s)).toEqual(texts.map(urlLetters));
    } finally {
      await client.end();
    }
  });

  it("each spelled URL carries the bits of its listing's list keys (catalog migration 33), added with a key or migrated", async () => {
    const fresh = await freshCatalogDatabase();
    const store = await PostgresCatalogStore.open(fresh, { urlIndexCap: CAP, urlWalkBudget: BUDGET });
    const client = new pg.Client({ connectionString: fresh });
    await client.connect();
    // The keys whose bits a listing's spelled URL lacks: none may.
    const missing = `SELECT k.listing_id, k.kind, k.value FROM listing_keys k JOIN listing_url_letters c ON c.listing_id = k.listing_id
      WHERE c.key_bits & catalog_key_bits(k.kind, k.value) <> catalog_key_bits(k.kind, k.value)`;
    // A listing's bits are its keys' (the migration sets no more).
    const exact = `SELECT c.listing_id FROM listing_url_letters c
      WHERE c.key_bits <> (SELECT coalesce(bit_or(catalog_key_bits(k.kind, k.value)), 0) FROM listing_keys k WHERE k.listing_id = c.listing_id)`;
    try {
      const drafts = Array.from({ length: 30 }, (_, i) => draft(i));
      let at = Date.parse('2026-01-01T00:00:00Z');
      for (const d of drafts) await store.writeListing(d, new Date((at += 1000)));
      // Written again on the other network, in another asset: keys added to a listing that has a spelled URL.
      for (const d of drafts.slice(0, 10)) {
        const network = d.terms.network === 'stellar:testnet' ? 'stellar:pubnet' : 'stellar:testnet';
        await store.writeListing({ ...d, terms: { ...d.terms, network, asset: 'COTHER' } }, new Date((at += 1000)));
      }
      const bits = await client.query<{ n: string; zero: string }>(
        'SELECT count(*) AS n, count(*) FILTER (WHERE key_bits = 0) AS zero FROM listing_url_letters',
      );
      expect(bits.rows[0]).toEqual({ n: '30', zero: '0' });
      expect((await client.query(missing)).rows).toEqual([]);
      const moved = drafts[0]!;
      const page = async () =>
        (
          await store.list(
            {
              url: moved.resource.slice(8),
              network: moved.terms.network === 'stellar:testnet' ? 'stellar:pubnet' : 'stellar:testnet',
              asset: 'COTHER',
            },
            { limit: 5, offset: 0 },
            now,
          )
        ).items.map((i) => i.resource);
      expect(await page()).toEqual([moved.resource]);
      // Migrated: the bits set again from the keys alone.
      await client.query('UPDATE listing_url_letters SET key_bits = 0');
      await client.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [
        CATALOG_MIGRATIONS.indexOf(URL_LETTERS_KEYED_MIGRATION),
      ]);
      await (await PostgresCatalogStore.open(fresh)).end();
      expect((await client.query(exact)).rows).toEqual([]);
      expect((await client.query(missing)).rows).toEqual([]);
      expect(await page()).toEqual([moved.resource]);
    } finally {
      await client.end();
      await store.end();
    }
  });

  it('the sample of spelled URLs counts the listings it is drawn from (a join is asked only while it resolves the cap)', async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const sample = await freshSample(client, new UrlSample(), 0);
      expect(sample.listings).toBe(LISTINGS);
      expect(sample.urls.length).toBeGreaterThan(0);
      const spelled = new Set((await client.query<{ l: string }>('SELECT letters AS l FROM listing_url_letters')).rows.map((r) => r.l));
      expect(sample.urls.every((url) => spelled.has(url))).toBe(true);
    } finally {
      await client.end();
    }
  });

  it("a url page's statement runs with its generic plan and no parallel workers, the settings back after it (queries.ts queryGeneric)", async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const settings = `SELECT current_setting('plan_cache_mode') AS mode, current_setting('max_parallel_workers_per_gather') AS workers`;
    try {
      await client.query('BEGIN');
      const before = (await client.query(settings)).rows[0];
      // The index's windows (and, for a substring few hold, the joined walk) as "Postgres by windows" reads them, scans,
      // scans always stopped short (then the index answers) and scans never stopped.
      const scales = [
        {
          urlIndexCap: CAP,
          urlWalkBudget: BUDGET,
          urlJoinCap: JOIN_CAP,
          urlScannedShare: 2,
          urlWalkedByIndexShare: 2,
          urlMoreWindowsFrom: 0,
        },
        { urlIndexCap: CAP, urlWalkBudget: BUDGET },
        { urlIndexCap: CAP, urlWalkBudget: BUDGET, urlScanBound: 1e-9 },
        { urlIndexCap: CAP, urlWalkBudget: BUDGET, urlScanBound: 1e9 },
      ];
      for (const scale of scales)
        for (const url of ['weather', 'example', 'n1', 'Forecast/', 'zqxwvu'])
          for (const others of [{}, { network: 'stellar:testnet' }, { network: 'stellar:pubnet', asset: 'CASSET', maxAmount: '1000' }]) {
            const read = {
              filters: { url, ...others },
              page: { limit: 5, offset: 0 },
              now: new Date('2026-02-01T00:00:00Z'),
              visibleSince: '2026-01-01T00:00:01.000Z',
              failing: FAILING_BEFORE,
            };
            await listBySelectiveFilter(client, read, scale, new UrlSample());
            expect((await client.query(settings)).rows[0]).toEqual(before);
          }
      const prepared = await client.query<{ name: string; statement: string; generic_plans: string; custom_plans: string }>(
        "SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'svc\\_url\\_%'",
      );
      expect(prepared.rows.length).toBeGreaterThan(3);
      expect(prepared.rows.some((row) => row.statement.includes('scanned AS MATERIALIZED'))).toBe(true);
      // `zqxwvu`, whose windows no URL holds, read by four ("Postgres by windows" asks uncommon windows beside the two).
      expect(prepared.rows.some((row) => row.statement.match(/c\.letters LIKE/g)?.length === 4)).toBe(true);
      for (const row of prepared.rows) expect({ name: row.name, custom: Number(row.custom_plans) }).toEqual({ name: row.name, custom: 0 });
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
  });
});
