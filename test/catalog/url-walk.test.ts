/**
 * The `url` filter's bounded list page (src/catalog/url-filter.ts, docs/CATALOG.md "List") against a plain scan, on both
 * stores, with the bounds lowered so a small random catalog takes both ways: a substring few listings hold is read from
 * the index (SQLite's trigram table, Postgres' suffixes; exact page and total, `partialResults` false); one more listings
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
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters, DiscoveryResource } from '../../src/catalog/types.ts';
import { asciiLower } from '../../src/catalog/url-filter.ts';
import { SUFFIX_LENGTH } from '../../src/catalog/postgres/url-suffixes.ts';
import { freshCatalogDatabase } from '../helpers/postgres.ts';
import { caseRandom } from '../helpers/cases.ts';
import { PAY_TO_A, PAY_TO_B, seededRandom, tempDir } from './fixtures.ts';

const CAP = 25;
const BUDGET = 150;
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
/** The same database, one suffix entry read first per listing looked for (url-suffixes.ts suffixMatchesSql): more are read again. */
let postgresFewSuffixes: PostgresCatalogStore;
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
  postgres = await PostgresCatalogStore.open(databaseUrl, { urlIndexCap: CAP, urlWalkBudget: BUDGET });
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
  // Its walks check their suffixes' listings past the first two entries (postgres/list-index.ts), the rest on their URLs.
  postgresFewSuffixes = await PostgresCatalogStore.open(databaseUrl, {
    urlIndexCap: CAP,
    urlWalkBudget: BUDGET,
    urlSuffixRowsPerMatch: 1,
    urlWalkRowsSpelled: 2,
  });
}, 120_000);
afterAll(async () => {
  sqlite.close();
  await postgres?.end();
  await postgresFewSuffixes?.end();
  dir.cleanup();
});

const stores = () =>
  [
    ['SQLite', sqlite],
    ['Postgres', postgres],
    ['Postgres, few suffixes read', postgresFewSuffixes],
  ] as const;

/** How many suffix entries each Postgres store reads first per listing looked for. */
const SUFFIX_ROWS: Record<string, number> = { Postgres: 4, 'Postgres, few suffixes read': 1 };

/**
 * How a Postgres store, reading `perMatch` suffix entries first per listing it looks for (CAP + 1 of them), finds the
 * listings holding `url` (src/catalog/postgres/url-suffixes.ts suffixMatchesSql, list-index.ts listByUrl): when the entries read are the whole range,
 * 'index' when at most CAP hold it, else 'walk joined' (every match known, no URL read on the walk); else 'walk' when
 * they name more than CAP matches, else 'read again' (more entries read: then one of those).
 */
function postgresWay(everything: DiscoveryResource[], url: string, perMatch: number): 'index' | 'walk joined' | 'walk' | 'read again' {
  const chars = Array.from(asciiLower(url));
  const kept = chars.slice(0, SUFFIX_LENGTH).join('');
  const entries: Array<{ suffix: string; id: number; holds: boolean }> = [];
  for (const item of everything) {
    const resource = Array.from(asciiLower(item.resource));
    const suffixes = new Set(resource.map((_, i) => resource.slice(i, i + SUFFIX_LENGTH).join('')));
    for (const suffix of suffixes)
      if (suffix.startsWith(kept)) entries.push({ suffix, id: listingIds.get(item.resource)!, holds: holds(item, url) });
  }
  entries.sort((x, y) => (x.suffix < y.suffix ? -1 : x.suffix > y.suffix ? 1 : x.id - y.id));
  const rows = (CAP + 1) * perMatch;
  if (entries.length < rows) return everything.filter((item) => holds(item, url)).length <= CAP ? 'index' : 'walk joined';
  return new Set(
    entries
      .slice(0, rows)
      .filter((entry) => entry.holds)
      .map((entry) => entry.id),
  ).size > CAP
    ? 'walk'
    : 'read again';
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
      // Shorter than a trigram (SQLite's URL index holds none for them: src/catalog/sqlite/url-probe.ts).
      'N1',
      '%',
      '/',
      'zq',
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
    const postgresWays = new Map<string, Set<string>>(Object.keys(SUFFIX_ROWS).map((name) => [name, new Set()]));
    for (const url of urls) {
      // What each store's cap counts: the listings holding `url`.
      const held = everything.filter((item) => holds(item, url)).length;
      for (const [name, perMatch] of Object.entries(SUFFIX_ROWS)) postgresWays.get(name)!.add(postgresWay(everything, url, perMatch));
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
            const walked = held <= CAP ? visible.get(since)! : walkedKey.slice(0, BUDGET);
            const all = walked.filter((item) => holds(item, url) && allowed.has(item.resource)).map((item) => item.resource);
            // The walk stops once it has the page and one more match.
            const want = page.offset + page.limit + 1;
            const matches = held <= CAP ? all : all.slice(0, want);
            const partialResults = held > CAP && (matches.length === want || walkedKey.length > BUDGET);
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
    // Each way of reading the suffixes was taken (src/catalog/postgres/url-suffixes.ts suffixMatchesSql, list-index.ts listByUrl).
    expect([...postgresWays.get('Postgres')!].sort()).toEqual(['index', 'walk', 'walk joined']);
    expect(postgresWays.get('Postgres, few suffixes read')!.has('read again')).toBe(true);
  }, 120_000);
});
