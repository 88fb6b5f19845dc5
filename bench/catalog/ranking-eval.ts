/**
 * nDCG@10 of the judged ranking set, before and after quality signals.
 *
 * nDCG@10 of the judged evaluation set (bench/catalog/lib/ranking-eval-set.ts), before (equal quality: the text
 * rank alone) and after (each listing's payment history), with the listings created in both
 * orders. Prints a table per query and the mean per kind (docs/BENCHMARKS.md "Ranking with quality").
 *
 *   npx tsx bench/catalog/ranking-eval.ts
 */
import { QUERIES, evaluate } from './lib/ranking-eval-set.ts';
import { QUICK } from '../lib/quick.ts';

const rows = new Map<string, { kind: string; before: number[]; after: number[] }>();
// --quick: one creation order (bench/lib/quick.ts).
for (const reversed of QUICK ? [false] : [false, true]) {
  const [before, after] = [await evaluate(false, reversed), await evaluate(true, reversed)];
  for (let i = 0; i < QUERIES.length; i++) {
    const q = QUERIES[i]!;
    const row = rows.get(q.query) ?? { kind: q.kind, before: [], after: [] };
    row.before.push(before[i]!.ndcg);
    row.after.push(after[i]!.ndcg);
    rows.set(q.query, row);
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log('| query | kind | nDCG@10 before (created low-demand first / reversed) | after (same) |');
console.log('| --- | --- | --- | --- |');
for (const [query, r] of rows)
  console.log(
    `| ${query} | ${r.kind} | ${r.before.map((x) => x.toFixed(3)).join(' / ')} | ${r.after.map((x) => x.toFixed(3)).join(' / ')} |`,
  );
for (const kind of ['relevance', 'tie']) {
  const of = [...rows.values()].filter((r) => r.kind === kind);
  console.log(
    `| mean, ${kind} queries | | ${mean(of.flatMap((r) => r.before)).toFixed(3)} | ${mean(of.flatMap((r) => r.after)).toFixed(3)} |`,
  );
}
