/**
 * The judged evaluation set of ranking with quality (bench/catalog/lib/ranking-eval-set.ts; figures in
 * docs/BENCHMARKS.md "Ranking with quality"): with each listing's payment history, nDCG@10 does
 * not drop for any query judged on relevance alone, and rises on average for the queries whose
 * equally relevant listings differ in demand.
 */
import { expect, it } from 'vitest';
import { evaluate } from '../../bench/catalog/lib/ranking-eval-set.ts';

it('nDCG@10: no drop on relevance queries, a rise on quality-tie queries', async () => {
  const [before, after] = [await evaluate(false), await evaluate(true)];
  const mean = (rows: typeof before, kind: string) => {
    const of = rows.filter((r) => r.query.kind === kind);
    return of.reduce((sum, r) => sum + r.ndcg, 0) / of.length;
  };
  for (let i = 0; i < before.length; i++)
    if (before[i]!.query.kind === 'relevance') expect(after[i]!.ndcg, before[i]!.query.query).toBeGreaterThanOrEqual(before[i]!.ndcg);
  expect(mean(after, 'tie')).toBeGreaterThan(mean(before, 'tie') + 0.05);
}, 60_000);
