/**
 * Search terms and their write-time scores. A listing revision's text is tokenized once, when it
 * is written, into one row per distinct term holding that term's field-weighted score
 *   score(term) = Σ_field weight × tf/(tf+1)      (weights: serviceName 4, tags 3, description 2, params 1)
 * so a query only reads the rows of its own terms (see search.ts and sqlite/search.ts for the rank built from them).
 */

import { createHash } from 'node:crypto';

export const FIELD_WEIGHTS = { serviceName: 4.0, tags: 3.0, description: 2.0, params: 1.0 } as const;
export const MAX_TERM_LENGTH = 64;

/**
 * The one limit of a search query (openapi.yaml `query` of GET /discovery/search, docs/CATALOG.md
 * "Search budget"): its length, in Unicode code points, as JSON Schema's maxLength counts. Any
 * number of words is accepted; what a search costs is bounded by the terms it ranks over
 * (term-budget.ts), not by refusing a sentence.
 */
export const MAX_QUERY_LENGTH = 2048;

const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/**
 * Why a (non-blank) query exceeds the limit, or undefined when it is within it: the one check
 * every entry point (GET /discovery/search, the catalog itself, the MCP search_resources tool) runs,
 * so each refuses with the same reason.
 */
export function queryLimitViolation(query: string): string | undefined {
  if (query.length <= MAX_QUERY_LENGTH) return undefined;
  const length = codePoints(query);
  if (length > MAX_QUERY_LENGTH) return `The query is ${length} characters long; at most ${MAX_QUERY_LENGTH} are accepted.`;
  return undefined;
}

export interface SearchText {
  serviceName: string;
  tags: string;
  description: string;
  params: string;
}

// eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Lowercase, diacritics removed, split on anything that is not a letter or a digit. Decompose,
 * drop combining marks, recompose: so "é" becomes "e" while Hangul syllables (which decompose into
 * letters, not marks) come back whole.
 */
export function tokenize(text: string): string[] {
  // Fast path, same result: ASCII has no marks to strip and its letters and digits are [a-z0-9].
  if (ASCII_ONLY.test(text))
    return text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((t) => t !== '');
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== '');
}

/**
 * Every distinct term of the text with its score, in the order fields are weighed. A token longer
 * than 64 characters is indexed as its 64-character prefix only when it equals it, i.e. never:
 * a query term is cut to 64 characters and matches whole tokens only.
 */
export function termScores(text: SearchText): Map<string, number> {
  const fields: Array<[string, number]> = [
    [text.serviceName, FIELD_WEIGHTS.serviceName],
    [text.tags, FIELD_WEIGHTS.tags],
    [text.description, FIELD_WEIGHTS.description],
    [text.params, FIELD_WEIGHTS.params],
  ];
  const scores = new Map<string, number>();
  for (const [value, weight] of fields) {
    if (value === '') continue;
    const tf = new Map<string, number>();
    for (const token of tokenize(value)) if (token.length <= MAX_TERM_LENGTH) tf.set(token, (tf.get(token) ?? 0) + 1);
    for (const [term, n] of tf) scores.set(term, (scores.get(term) ?? 0) + (weight * n) / (n + 1));
  }
  return scores;
}

/**
 * Term signatures (docs/CATALOG.md "Search"): every term row of a revision carries three 64-bit
 * summaries of the revision's whole term set, so a several-term search can judge a listing from
 * the one row it is reading, without a key lookup per other term:
 *   - `sig`, a one-bit-per-term Bloom mask: the bit of a term the revision contains is always set,
 *     so a row whose mask lacks a query term's bit surely lacks the term;
 *   - `sketchA` and `sketchB`, two count-min sketches of the revision's shares: 16 buckets of 4
 *     bits each, a term's bucket holding the largest code (`shareCode`) of the terms hashed there.
 *     A term's share is at most the smaller of its two buckets' bounds (`shareCodeBound`).
 * The bit and the buckets come from the term's MD5 (bytes 0, 1 and 2), the bit as Postgres's
 * catalog_term_bit computes it, so they never change with the process or the store.
 */
export const SHARE_CODE_QUANTUM = 400;
/** The top code: a share above 14 × 400 milli, bounded only by the term's largest share. */
export const SHARE_CODE_TOP = 15;

/** A term's signature bit (0–63) and its bucket (0–15) in each sketch. */
export function termSlots(term: string): { bit: number; bucketA: number; bucketB: number } {
  const digest = createHash('md5').update(term).digest();
  return { bit: digest[0]! & 63, bucketA: digest[1]! & 15, bucketB: digest[2]! & 15 };
}

/**
 * SQL: an upper bound on a term's rounded share in the revision of a row `t` from the row's
 * sketches (the smaller of the term's two bucket codes, times the code's quantum), its `largest`
 * share when the code is the top one (which holds every share above it). `least` names the
 * dialect's two-argument minimum: SQLite's `min`, Postgres's `least`.
 */
export function sketchShareBoundSql(slots: { bucketA: number; bucketB: number }, largest: number, least: 'min' | 'least'): string {
  const code = `${least}((t.sketch_a >> ${4 * slots.bucketA}) & 15, (t.sketch_b >> ${4 * slots.bucketB}) & 15)`;
  return `${least}(${SHARE_CODE_QUANTUM} * ${code} + (${code} / ${SHARE_CODE_TOP}) * 1000000, ${largest})`;
}

/** The code of a term's share, in milli (round(share × 1000)): the least c with c × 400 ≥ milli, at most 15. */
export const shareCode = (milli: number): number => Math.min(SHARE_CODE_TOP, Math.max(0, Math.ceil(milli / SHARE_CODE_QUANTUM)));

/** The signature and sketches of a revision with these term scores, as SQLite's and Postgres's signed 64-bit integers. */
export function termSignature(scores: Map<string, number>): { sig: bigint; sketchA: bigint; sketchB: bigint } {
  let sig = 0n;
  const a = new Array<number>(16).fill(0);
  const b = new Array<number>(16).fill(0);
  for (const [term, score] of scores) {
    const slots = termSlots(term);
    const code = shareCode(Math.round(score * 1000));
    sig |= 1n << BigInt(slots.bit);
    a[slots.bucketA] = Math.max(a[slots.bucketA]!, code);
    b[slots.bucketB] = Math.max(b[slots.bucketB]!, code);
  }
  const pack = (codes: number[]) =>
    BigInt.asIntN(
      64,
      codes.reduce((acc, code, i) => acc | (BigInt(code) << BigInt(4 * i)), 0n),
    );
  return { sig: BigInt.asIntN(64, sig), sketchA: pack(a), sketchB: pack(b) };
}

/**
 * How many of a revision's largest shares `top_shares` sums, on both stores (SQLite catalog
 * migration 12, Postgres 17). A query of n ≤ this many terms shares at most that sum; one of more
 * terms at most n / TOP_SHARES of it (each further share is at most the smallest of them). Four:
 * measured on the 100k corpus (docs/BENCHMARKS.md "Search by number of terms"), the revisions whose
 * bound reaches the page of the 3, 4 and 5 most common words are 2,350, 243 and 5,081 of 100,000
 * (summing three: 88, 3,336 and 16,003).
 */
export const TOP_SHARES = 4;

/** The sum of the `n` largest rounded shares (milli) of a revision's term scores (TOP_SHARES unless given). */
export function topShares(scores: Map<string, number>, n: number = TOP_SHARES): number {
  return topShareSums(scores, [n])[0]!;
}

/** The sums of the largest `counts[i]` rounded shares of a revision's term scores, one sort for all. */
export function topShareSums(scores: Map<string, number>, counts: readonly number[]): number[] {
  const milli = [...scores.values()].map((score) => Math.round(score * 1000)).sort((x, y) => y - x);
  return counts.map((n) => milli.slice(0, n).reduce((sum, m) => sum + m, 0));
}

/**
 * The query lengths past TOP_SHARES whose own share sum every revision also carries (SQLite catalog
 * migration 15, Postgres 19: `top_shares_5` … `top_shares_7`): scaled from 4 shares the bound of 6 words reached 24,737 of the
 * 100k revisions and of 8 all of them, summed from 5, 6 and 7 shares 801, 2,177 and 6,144 revisions
 * reach the page's floor of 5, 6 and 7 words (docs/BENCHMARKS.md "Search by number of terms"). An 8-share
 * sum still reaches 28,932, about its driver's rows, so 8 terms read the common-term masks on SQLite (sqlite/common-terms.ts) or the driver.
 */
export const LONG_QUERY_SHARE_SUMS = [5, 6, 7] as const;

/** Every share sum a revision carries, written with it (SQLite revision-bounds.ts insertRevision, Postgres revisions.ts). */
export const REVISION_SHARE_SUMS = [TOP_SHARES, ...LONG_QUERY_SHARE_SUMS];

/**
 * The revision scans read at most this many terms, every term common, from the revisions in order of
 * their share bound (sqlite/revision-scan.ts, postgres/revision-scan.ts): each revision carries the
 * sum of its n largest shares for n up to it. Past it even that sum reaches about as many revisions as
 * the driver has rows (at 100k, 28,932 for the 8 most common words, docs/BENCHMARKS.md "Search by
 * number of terms").
 */
export const REVISION_SCAN_TERMS = Math.max(TOP_SHARES, ...LONG_QUERY_SHARE_SUMS);

/**
 * The revision column (and its index) whose stored sum bounds a query of n terms, n at most
 * REVISION_SCAN_TERMS: the sum of the revision's n largest shares (n ≤ 4 share at most the 4 largest).
 */
export function shareSumBound(n: number): { column: string; index: string } {
  if (n > REVISION_SCAN_TERMS) throw new Error(`no revision share sum bounds ${n} terms`);
  const stored = Math.max(n, TOP_SHARES);
  return { column: topSharesColumn(stored), index: topSharesIndex(stored) };
}

/** The revision column holding the sum of a revision's `n` largest rounded shares (TOP_SHARES or LONG_QUERY_SHARE_SUMS). */
export function topSharesColumn(n: number): string {
  return n === TOP_SHARES ? 'top_shares' : `top_shares_${n}`;
}

/** The index of the revisions by topSharesColumn(n), descending. */
export function topSharesIndex(n: number): string {
  return n === TOP_SHARES ? 'search_revisions_by_top' : `search_revisions_by_${topSharesColumn(n)}`;
}
