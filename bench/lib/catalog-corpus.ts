/**
 * The benchmark corpus: many sellers (payTo), several networks, a Zipf-distributed vocabulary,
 * http and mcp listings. Seeded straight through the catalog store (CatalogStore.writeListing,
 * the same write path a settlement takes after its checks), so 100k listings take a minute, not
 * an hour of settlements. Deterministic (xorshift) so every run builds the same file.
 */
import { Keypair } from '@stellar/stellar-sdk';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { getJson } from './http-load.ts';

export const NETWORKS = ['stellar:testnet', 'stellar:pubnet', 'stellar:futurenet', 'eip155:8453', 'solana:mainnet'];
const NETWORK_WEIGHTS = [0.45, 0.3, 0.1, 0.1, 0.05];
const SELLERS = 2000;
const VOCABULARY = 20_000;

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'xi', 'ze', 'pa', 'do', 'fu', 'gi', 'ho', 'ju', 'be'];
/** Word k of the vocabulary (rank 0 is the most frequent). */
export function vocabularyWord(k: number): string {
  let w = '';
  let n = k + 1;
  while (n > 0) {
    w += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  }
  return w;
}

/** Words an agent frames a sentence with, and English content words (which WordNet relates: the corpus holds none of them). */
const AGENT_FRAME = 'the a for in of to and please find me an api that with my is'.split(' ');
const ENGLISH = 'weather city price forecast currency convert photo text parcel send email map news image voice rate'.split(' ');
/**
 * A random word of an agent's sentence: 30 % framing words, 20 % English content words, 15 % of the corpus's 16 most
 * common words, the rest its content words (ranks 40 to 3,000).
 */
export function agentSentenceWord(rand: () => number): string {
  const r = rand();
  if (r < 0.3) return AGENT_FRAME[Math.floor(rand() * AGENT_FRAME.length)]!;
  if (r < 0.5) return ENGLISH[Math.floor(rand() * ENGLISH.length)]!;
  if (r < 0.65) return vocabularyWord(Math.floor(rand() * 16));
  return vocabularyWord(40 + Math.floor(rand() * 2960));
}

/** search-bands' word-frequency bands (bandQuery), in the order its tables list them. */
export const SEARCH_BANDS = ['top 16', 'top 50', 'top 200', 'natural', 'agent'];

/**
 * A query of `n` words of a band (SEARCH_BANDS): words of the 16, 50 or 200 most common; "natural": every other word
 * one of the 8 most common, the others content words (ranks 40 to 3,000); "agent": an agent's sentence (agentSentenceWord).
 */
export function bandQuery(band: string, n: number, rand: () => number): string {
  const top = /^top (\d+)$/.exec(band);
  if (!top && band !== 'natural' && band !== 'agent') throw new Error(`no search band ${band}`);
  return Array.from({ length: n }, (_, k) =>
    top
      ? vocabularyWord(Math.floor(rand() * Number(top[1])))
      : band === 'agent'
        ? agentSentenceWord(rand)
        : k % 2 === 1
          ? vocabularyWord(Math.floor(rand() * 8))
          : vocabularyWord(40 + Math.floor(rand() * 2960)),
  ).join(' ');
}

/** Zipf(s = 1) over the vocabulary (`wordOf`: word k of it) by inverse CDF on a precomputed table. */
export function zipf(rand: () => number, wordOf: (k: number) => string = vocabularyWord): () => string {
  const cdf = new Float64Array(VOCABULARY);
  let acc = 0;
  for (let k = 0; k < VOCABULARY; k++) cdf[k] = acc += 1 / (k + 1);
  return () => {
    const x = rand() * acc;
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return wordOf(lo);
  };
}

export function sellers(): string[] {
  const rand = rng(7);
  return Array.from({ length: SELLERS }, () =>
    Keypair.fromRawEd25519Seed(Buffer.from(Array.from({ length: 32 }, () => Math.floor(rand() * 256)))).publicKey(),
  );
}

/** The corpus: `count` listing drafts, each with the instant it is written (one per second from 2026-01-01). */
export function* corpusListings(count: number, wordOf?: (k: number) => string): Generator<{ draft: ListingDraft; at: Date }> {
  const rand = rng(0x2545f491);
  const word = zipf(rand, wordOf);
  const words = (n: number) => Array.from({ length: n }, word).join(' ');
  const payTos = sellers();
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < count; i++) {
    const owner = payTos[Math.floor(rand() * rand() * SELLERS)]!; // skewed: a few big sellers
    let r = rand();
    const network = NETWORKS[NETWORK_WEIGHTS.findIndex((w) => (r -= w) < 0)] ?? NETWORKS[0]!;
    const mcp = rand() < 0.15;
    const draft: ListingDraft = {
      resource: `https://api${i}.seller${payTos.indexOf(owner)}.example.com/${word()}`,
      type: mcp ? 'mcp' : 'http',
      toolName: mcp ? `${word()}_${word()}` : '',
      owner,
      x402Version: 2,
      terms: {
        scheme: 'exact',
        network,
        asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
        amount: String(1000 + Math.floor(rand() * 1e6)),
        payTo: owner,
        maxTimeoutSeconds: 60,
      },
      metadata: {
        description: words(8 + Math.floor(rand() * 24)),
        serviceName: `${word()} ${word()}`.slice(0, 32),
        tags: [word(), word(), word()],
        mimeType: 'application/json',
      },
      bazaar: { info: { input: { type: mcp ? 'mcp' : 'http', method: 'GET' } }, schema: { type: 'object' } },
      parameterText: words(4),
      dropped: [],
    };
    yield { draft, at: new Date(start + i * 1000) };
  }
}

/** Seeds `count` listings into the SQLite file, 2,000 per transaction (`wordOf`: the vocabulary, corpusListings). */
export function seedCorpus(dbPath: string, count: number, onProgress?: (done: number) => void, wordOf?: (k: number) => string): void {
  const store = new CatalogStore(dbPath);
  try {
    let i = 0;
    for (const { draft, at } of corpusListings(count, wordOf)) {
      if (i % 2000 === 0) store.db.exec('BEGIN IMMEDIATE');
      store.writeListing(draft, at);
      if (i % 2000 === 1999 || i === count - 1) store.db.exec('COMMIT');
      if (onProgress && i % 10_000 === 9_999) onProgress(i + 1);
      i++;
    }
  } finally {
    store.close();
  }
}

export interface DiscoveryCase {
  name: string;
  /** The request for the i-th repetition. */
  path: (i: number) => string;
  /** What the bare baseline server answers instead (it has no search cursors). */
  baselinePath?: (i: number) => string;
}

/** A `url` filter's value: 3–24 characters of one of `urls` (the corpus's https://api{i}.seller{j}.example.com/{word}) after "https://". */
export function urlSubstring(rand: () => number, urls: readonly string[]): string {
  const url = urls[Math.floor(rand() * urls.length)]!;
  const start = 8 + Math.floor(rand() * (url.length - 11));
  return encodeURIComponent(url.slice(start, start + 3 + Math.floor(rand() * 22)));
}

/** A `maxUsdPrice` value of 0.0001–0.1000 USD: 1,000–1,000,000 base units of a 7-decimal asset, the corpus's range. */
export const usdPriceCap = (rand: () => number) => (0.0001 + Math.floor(rand() * 1000) / 10_000).toFixed(4);

/** The n most common words, the q-th rotation (same set, another order: the rank ignores order). */
export function mostCommonQuery(n: number, q: number): string {
  const words = Array.from({ length: n }, (_, k) => vocabularyWord(k));
  return [...words.slice(q % n), ...words.slice(0, q % n)].join(' ');
}

/** n words alternating content words (ranks 40–3,000) and common ones (ranks 0–7), the q-th variant: an agent's sentence. */
export function naturalQuery(n: number, q: number): string {
  return Array.from({ length: n }, (_, k) =>
    k % 2 === 1 ? vocabularyWord(k >> 1) : vocabularyWord(40 + ((q * 977 + k * 389) % 2960)),
  ).join(' ');
}

/**
 * The discovery requests every catalog benchmark measures, against a svc serving this corpus on
 * `port`: search with 2 terms, 1 common term and a cursor page (the cursor is that server's own),
 * list without filter, by network, by payTo and at a deep offset. Also the terms and payTo used.
 */
export async function discoveryCases(port: number): Promise<{ cases: DiscoveryCase[]; two: string; common: string; payTo: string }> {
  const common = vocabularyWord(0);
  const two = `${vocabularyWord(3)} ${vocabularyWord(40)}`;
  // A page carries a cursor only when more matches follow: a small corpus (--quick) may have fewer
  // than 21, and then the cursor case walks pages of 1.
  const pageOf = (limit: number) => getJson<{ pagination: { cursor?: string } }>(port, `/discovery/search?query=${common}&limit=${limit}`);
  const cursorLimit = (await pageOf(20)).pagination.cursor ? 20 : 1;
  const firstCursor = (await pageOf(cursorLimit)).pagination.cursor;
  if (!firstCursor) throw new Error(`the corpus has fewer than 2 matches for "${common}": no cursor page to measure`);
  const cursor = encodeURIComponent(firstCursor);
  const newest = await getJson<{ pagination: { total: number }; items: Array<{ accepts: Array<{ payTo: string }> }> }>(
    port,
    '/discovery/resources?limit=1',
  );
  const payTo = newest.items[0]!.accepts[0]!.payTo;
  const deep = Math.floor(newest.pagination.total * 0.9);
  const cases: DiscoveryCase[] = [
    { name: `search, 2 terms ("${two}")`, path: () => `/discovery/search?query=${encodeURIComponent(two)}&limit=20` },
    { name: `search, 1 common term ("${common}")`, path: () => `/discovery/search?query=${common}&limit=20` },
    {
      name: `search, cursor page 2 (pages of ${cursorLimit})`,
      path: () => `/discovery/search?query=${common}&limit=${cursorLimit}&cursor=${cursor}`,
      baselinePath: () => `/discovery/search?query=${common}&limit=${cursorLimit}`,
    },
    { name: 'list, no filter', path: (i) => `/discovery/resources?limit=20&offset=${(i * 7) % 200}` },
    { name: 'list, network filter', path: (i) => `/discovery/resources?network=stellar:pubnet&limit=20&offset=${(i * 7) % 200}` },
    { name: 'list, payTo filter', path: () => `/discovery/resources?payTo=${payTo}&limit=20` },
    { name: `list, offset ${deep.toLocaleString('en')}`, path: () => `/discovery/resources?limit=20&offset=${deep}` },
  ];
  return { cases, two, common, payTo };
}
