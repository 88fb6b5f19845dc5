/**
 * Quality signals (docs/CATALOG.md "Quality signals"; openapi.yaml ListingQuality), kept incrementally by both stores,
 * a bounded number of rows per settlement, never by scanning payments: the listing's `quality_days` (per UTC day of
 * the window, `calls` and `payers`, the distinct payers whose LAST payment for the listing fell that day) and
 * `listing_payments` (each payment's unique id, day, listing and payer; one without an id is kept when it names a
 * payer). A payment moves its payer from its old last
 * day's `payers` to today's, so the window's sum of `payers` is exactly its distinct payers; the unique id makes a hook
 * run again for the same payment (the journal retries it) count once. Payments older than the window are pruned, at
 * most PRUNE_BATCH per write: a payer whose rows all left the window pays anew, as one who never paid.
 */
import type { components } from '../generated/openapi.ts';

export type ListingQuality = components['schemas']['ListingQuality'];

/** The window: today (UTC) and the 29 days before it. */
export const QUALITY_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

/** Days since the epoch, UTC. */
export const utcDay = (at: Date | number): number => Math.floor((typeof at === 'number' ? at : at.getTime()) / DAY_MS);
/** The first day inside the window as of `now`. */
export const windowStartDay = (now: Date | number): number => utcDay(now) - (QUALITY_WINDOW_DAYS - 1);

/** A listing's calls and payers per UTC day (`quality_days` of its row): [day, calls, payers], by day. */
export type QualityDays = Array<[day: number, calls: number, payers: number]>;

/** A `quality_days` value as a store reads it (JSON text on SQLite, jsonb on Postgres; null before the first payment). */
export const qualityDaysOf = (stored: unknown): QualityDays =>
  stored === null || stored === undefined ? [] : ((typeof stored === 'string' ? JSON.parse(stored) : stored) as QualityDays);

/**
 * The days after one counted payment on `day`: its call, and its payer moved to `day` when it names one whose last
 * payment (`lastPaid`, null for a new payer) is earlier (a payment dated before it, a clock set back, moves nothing).
 * The days before the window go.
 */
export function withPayment(days: QualityDays, day: number, payer: { lastPaid: number | null } | undefined): QualityDays {
  const start = windowStartDay(day * DAY_MS);
  const kept = days.filter(([d]) => d >= start).map(([d, calls, payers]): [number, number, number] => [d, calls, payers]);
  const entry = (d: number) => kept.find(([at]) => at === d);
  if (!entry(day)) kept.push([day, 0, 0]);
  entry(day)![1] += 1;
  if (payer !== undefined && (payer.lastPaid === null || payer.lastPaid < day)) {
    entry(day)![2] += 1;
    const before = payer.lastPaid === null ? undefined : entry(payer.lastPaid);
    if (before) before[2] -= 1;
  }
  return kept.sort(([a], [b]) => a - b);
}

/** The window's calls and distinct payers as of `now`. */
export function windowTotals(days: QualityDays, now: Date): { calls: number; payers: number } {
  const since = windowStartDay(now);
  const inWindow = days.filter(([d]) => d >= since);
  return { calls: inWindow.reduce((n, [, calls]) => n + calls, 0), payers: inWindow.reduce((n, [, , payers]) => n + payers, 0) };
}

/**
 * What the settle hook knows of the payment besides its envelope: opaque strings the catalog only
 * compares (it knows nothing of the chain). Both optional: a payment with no payer counts as a call.
 */
export interface PaymentFacts {
  payer?: string;
  /** A unique id of the payment (a settlement transaction), so it is counted once. */
  id?: string;
}

const MAX_FACT_LENGTH = 256;
const usable = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_FACT_LENGTH && ![...value].some(isControl) ? value : undefined;
const isControl = (ch: string) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f;

/** The facts as stored: anything that is not a short printable string is left out. */
export function paymentFactsOf(facts: { payer?: unknown; id?: unknown } | undefined): PaymentFacts {
  const payer = usable(facts?.payer);
  const id = usable(facts?.id);
  return { ...(payer ? { payer } : {}), ...(id ? { id } : {}) };
}

/**
 * The quality level a search rank adds to a listing (docs/CATALOG.md "Ranking"): logarithmic in
 * the distinct payers, in half-octave steps of 5, plus at most 4 for repeat payments (octave steps
 * of 2), capped at 64. One more distinct payer counts for more than several more repeat payments,
 * and volume cannot buy more than the cap. The steps keep new search revisions rare: a level
 * changes about 15 times in a listing's climb, not at every new payer (settle latency).
 */
export const MAX_QUALITY_LEVEL = 64;
export function qualityLevel(calls: number, payers: number): number {
  const repeats = Math.max(0, calls - payers);
  const level = 5 * Math.floor(2 * Math.log2(1 + payers)) + 2 * Math.min(2, Math.floor(Math.log2(1 + repeats)));
  return Math.min(MAX_QUALITY_LEVEL, level);
}

/**
 * A listing's quality level is added to each of its term scores as level / 1024: an exact binary
 * fraction, so the score stays exact where Postgres stores it (postgres/migrations.ts, score units) and
 * both stores round it to the same `milli`; at most 62.5 thousandths of a rank point per matched term.
 */
export const QUALITY_SCORE_UNIT = 1 / 1024;

/** A revision's term scores with the listing's quality level added to each (as both stores index them). */
export function withQualityLevel(scores: Map<string, number>, level: number): Map<string, number> {
  if (level === 0) return scores;
  return new Map([...scores].map(([term, score]) => [term, score + level * QUALITY_SCORE_UNIT]));
}

/** The key that decides whether a listing needs a new search revision: its text and its quality level. */
export const revisionKey = (textHash: string, level: number): string => (level === 0 ? textHash : `${textHash}:q${level}`);

/** The quality of a listing from its window sums and last-paid time. */
export function qualityOf(calls: number, payers: number, lastCalledAt: string): ListingQuality {
  return { l30DaysTotalCalls: calls, l30DaysUniquePayers: payers, lastCalledAt };
}
