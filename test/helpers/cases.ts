/**
 * How many cases the differential and property tests run, and which (docs/TESTING.md "Case
 * counts"). By default each runs every case that reaches a distinct path (plan, tier, filter
 * shape, page kind) and a sample of the rest, drawn anew each run from TEST_SEED (vitest.config.ts
 * draws it when unset; the progress reporter prints it at the start and end of the run);
 * `npm run test:deep` (TEST_DEEP=1) runs every case the tests were written with.
 *
 *   const rand = caseRandom('postgres-differential');   // this file's own stream of the run's seed
 *   for (let q = 0; q < cases(1_000, 150); q++) …
 *   for (const n of sample([3, 4, 5, 6, 7, 8], 3, rand)) …
 *
 * Replay a failure with the printed seed: `TEST_SEED=123 npx vitest run test/catalog/…`.
 */

/** Every case the tests were written with (`npm run test:deep`). */
export const DEEP = process.env.TEST_DEEP === '1';

/** The run's seed (vitest.config.ts sets it; a file run without the config gets 1). */
export const TEST_SEED = Number(process.env.TEST_SEED ?? 1) >>> 0;

/** `deep` cases under `npm run test:deep`, else `cut`. */
export function cases(deep: number, cut: number): number {
  return DEEP ? deep : cut;
}

/** A generator in [0, 1) for `stream` (a file's or a test's name) from the run's seed: streams draw apart. */
export function caseRandom(stream: string): () => number {
  let s = TEST_SEED ^ 0x9e3779b9;
  for (const ch of stream) s = Math.imul(s ^ ch.charCodeAt(0), 0x01000193);
  s = s >>> 0 || 1;
  return () => {
    // xorshift32, as test/catalog/fixtures.ts seededRandom
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** `k` of `items` drawn by `rand`, in their order (all of them under `npm run test:deep`, or when k ≥ their number). */
export function sample<T>(items: readonly T[], k: number, rand: () => number): T[] {
  if (DEEP || k >= items.length) return [...items];
  const chosen = new Set<number>();
  while (chosen.size < k) chosen.add(Math.floor(rand() * items.length));
  return items.filter((_, i) => chosen.has(i));
}

/**
 * A stratified sample of `items`: `perGroup` of each group (`groupOf`; a number, or one for the
 * group of its first item) drawn by `rand`, then, for
 * each mark (`marksOf`: the tier a page reaches, the plan a case takes) some item has but none
 * drawn has, one more item bearing it. So every group and every mark the cases reach is in the
 * sample, the rest drawn anew each run. All of `items` under `npm run test:deep`. In their order.
 */
export function sampleCovering<T>(
  items: readonly T[],
  groupOf: (item: T) => string,
  perGroup: number | ((first: T) => number),
  rand: () => number,
  marksOf: (item: T) => readonly string[] = () => [],
): T[] {
  if (DEEP) return [...items];
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => groups.set(groupOf(item), [...(groups.get(groupOf(item)) ?? []), i]));
  const chosen = new Set<number>();
  for (const members of groups.values()) {
    const k = typeof perGroup === 'number' ? perGroup : perGroup(items[members[0]!]!);
    for (const i of sample(members, k, rand)) chosen.add(i);
  }
  const marked = new Set([...chosen].flatMap((i) => marksOf(items[i]!)));
  const missing = new Map<string, number[]>();
  items.forEach((item, i) => {
    for (const mark of marksOf(item)) if (!marked.has(mark)) missing.set(mark, [...(missing.get(mark) ?? []), i]);
  });
  for (const [mark, bearers] of missing) {
    if (marked.has(mark)) continue;
    const i = bearers[Math.floor(rand() * bearers.length)]!;
    chosen.add(i);
    for (const m of marksOf(items[i]!)) marked.add(m);
  }
  return items.filter((_, i) => chosen.has(i));
}
