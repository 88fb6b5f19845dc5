/**
 * A judged evaluation set for search ranking with quality signals (docs/BENCHMARKS.md "Ranking
 * with quality"): listings with their text and payment history, and queries with graded
 * relevance (0–3), in two kinds:
 * - `relevance`: the listings differ in how well their text answers the query; grades follow the
 *   text only, and demand is often higher on the less relevant listing (quality must not reorder
 *   them);
 * - `tie`: several listings answer equally well by their text and differ in demand; grades give
 *   the listing more distinct buyers pay for the higher grade (what a buyer choosing between them
 *   would pick).
 * `evaluate` builds a catalog (the real one, on a temp SQLite file), records the payments through
 * the settle hook, runs each query, and returns nDCG@10 per query. The "before" ranking is the same
 * catalog with one payment from one payer per listing: equal quality everywhere, so the order is
 * the text rank's (ties by creation order), as before quality signals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCatalog } from '../../../src/catalog/index.ts';
import { BUSY_MACHINE_BOUNDS } from '../../../test/catalog/fixtures.ts';

export interface JudgedListing {
  key: string;
  serviceName: string;
  description: string;
  tags: readonly string[];
  /** Payments in the window and how many distinct payers made them. */
  calls: number;
  payers: number;
}

const L = (
  key: string,
  serviceName: string,
  description: string,
  tags: readonly string[],
  payers: number,
  calls = payers,
): JudgedListing => ({
  key,
  serviceName,
  description,
  tags,
  calls,
  payers,
});
const WEATHER = ['Weather Now', 'current weather and hourly forecast for any city', ['weather', 'forecast']] as const;
const QUICK = ['Quick Translate', 'translate text between languages', ['translation']] as const;
const QUOTES = ['Stock Quotes', 'real time stock quotes and prices', ['stocks', 'finance']] as const;
const GEOCODER = ['Geocoder', 'convert street addresses to coordinates', ['maps']] as const;
const IMAGES = ['Image Generator', 'generate images from text prompts', ['images', 'ai']] as const;

/** Low-demand copies first: created first, they win ties by id when quality is not used. */
export const LISTINGS: JudgedListing[] = [
  L('w-new', ...WEATHER, 1),
  L('w-mid', ...WEATHER, 4, 6),
  L('w-pop', ...WEATHER, 25, 120),
  L('w-climate', 'Climate Archive', 'historical climate records and weather statistics', ['climate'], 30, 90),
  L('w-radar', 'Rain Radar', 'precipitation radar images', ['weather'], 2),
  L('t-best', 'Translate Pro', 'translate documents and text between 100 languages with glossaries', ['translation'], 1),
  L('t-weak', 'Text Tools', 'word count, case conversion, can translate short phrases', ['text'], 40, 200),
  L('t-copy2', ...QUICK, 1),
  L('t-copy1', ...QUICK, 12, 30),
  L('s-c', ...QUOTES, 1, 50),
  L('s-b', ...QUOTES, 2),
  L('s-a', ...QUOTES, 9, 20),
  L('s-news', 'Market News', 'financial news headlines and stock market summaries', ['news'], 20, 40),
  L('g-1', ...GEOCODER, 1),
  L('g-2', ...GEOCODER, 6, 8),
  L('g-rev', 'Reverse Geocoder', 'convert coordinates to street addresses', ['maps'], 3),
  L('i-gen', ...IMAGES, 2),
  L('i-gen2', ...IMAGES, 10, 14),
  L('i-up', 'Image Upscaler', 'upscale images to higher resolution', ['images'], 15, 30),
];

export interface JudgedQuery {
  query: string;
  kind: 'relevance' | 'tie';
  /** Grades of the relevant listings; any other is 0. */
  grades: Record<string, number>;
}

export const QUERIES: JudgedQuery[] = [
  { query: 'translate documents glossaries', kind: 'relevance', grades: { 't-best': 3, 't-copy1': 1, 't-copy2': 1, 't-weak': 1 } },
  { query: 'upscale resolution', kind: 'relevance', grades: { 'i-up': 3 } },
  { query: 'reverse geocoder coordinates', kind: 'relevance', grades: { 'g-rev': 3, 'g-1': 1, 'g-2': 1 } },
  { query: 'precipitation radar', kind: 'relevance', grades: { 'w-radar': 3, 'w-climate': 0 } },
  { query: 'market news headlines', kind: 'relevance', grades: { 's-news': 3, 's-a': 1, 's-b': 1, 's-c': 1 } },
  { query: 'historical climate', kind: 'relevance', grades: { 'w-climate': 3, 'w-new': 0 } },
  { query: 'weather forecast', kind: 'tie', grades: { 'w-pop': 3, 'w-mid': 2, 'w-new': 1, 'w-radar': 1, 'w-climate': 1 } },
  { query: 'stock quotes', kind: 'tie', grades: { 's-a': 3, 's-b': 2, 's-c': 1, 's-news': 1 } },
  { query: 'geocoder addresses', kind: 'tie', grades: { 'g-2': 3, 'g-1': 2, 'g-rev': 1 } },
  { query: 'image generator', kind: 'tie', grades: { 'i-gen2': 3, 'i-gen': 2, 'i-up': 1 } },
  { query: 'quick translate', kind: 'tie', grades: { 't-copy1': 3, 't-copy2': 2, 't-best': 1, 't-weak': 1 } },
];

/** nDCG@10 of `ranked` keys against `grades` (gain 2^grade − 1, log2 discount). */
export function ndcgAt10(ranked: string[], grades: Record<string, number>): number {
  const dcg = (gains: number[]) => gains.slice(0, 10).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(grades).sort((a, b) => b - a));
  return ideal === 0 ? 1 : dcg(ranked.map((key) => grades[key] ?? 0)) / ideal;
}

const keyOf = (resource: string) => new URL(resource).hostname.split('.')[0]!;

/**
 * nDCG@10 per query on a fresh catalog. `withQuality` false: one payment by one payer per listing
 * (the before ranking); true: each listing's judged history. `reversed` creates the listings in
 * the opposite order (ties by id then favour the other side).
 */
export async function evaluate(
  withQuality: boolean,
  reversed = false,
): Promise<Array<{ query: JudgedQuery; ndcg: number; top: string[] }>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ranking-eval-'));
  let now = Date.parse('2026-03-01T00:00:00Z');
  const catalog = openCatalog(evalCatalogOptions(dir, () => new Date(now)));
  try {
    let tx = 0;
    for (const listing of reversed ? [...LISTINGS].reverse() : LISTINGS) {
      const history = withQuality ? listing : { calls: 1, payers: 1 };
      for (let i = 0; i < history.calls; i++) {
        now += 1_000;
        const outcome = await catalog.recordSettlement({
          ...envelope(listing),
          payment: { payer: `payer-${listing.key}-${i % history.payers}`, id: `tx-${++tx}` },
        });
        if (outcome?.status !== 'success') throw new Error(`${listing.key} was not listed: ${JSON.stringify(outcome)}`);
      }
    }
    const results = [];
    for (const query of QUERIES) {
      const page = await catalog.search(query.query, {}, { limit: 10 });
      const top = page.resources.map((r) => keyOf(r.resource));
      results.push({ query, ndcg: ndcgAt10(top, query.grades), top });
    }
    return results;
  } finally {
    await catalog.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A judged catalog on a temp SQLite file in `dir`, with the evaluation's clock and the tests' busy-machine bounds. */
export const evalCatalogOptions = (dir: string, clock: () => Date) => ({
  dbPath: join(dir, 'catalog.sqlite'),
  logger: { warn() {}, error() {} },
  clock,
  ...BUSY_MACHINE_BOUNDS,
});

/** The settlement that lists a judged listing at https://KEY.example.com/api (bench/catalog/agent-eval.ts lists its own with it). */
export function envelope(listing: Pick<JudgedListing, 'key' | 'serviceName' | 'description' | 'tags'>) {
  const requirements = {
    scheme: 'exact',
    network: 'stellar:testnet',
    asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
    amount: '10000',
    payTo: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
    maxTimeoutSeconds: 60,
  };
  return {
    paymentPayload: {
      x402Version: 2,
      resource: {
        url: `https://${listing.key}.example.com/api`,
        description: listing.description,
        serviceName: listing.serviceName,
        tags: listing.tags,
      },
      accepted: requirements,
      payload: {},
      extensions: { bazaar: { info: { input: { type: 'http', method: 'GET' } }, schema: { type: 'object' } } },
    },
    paymentRequirements: requirements,
  };
}
