/**
 * Search for agents (docs/BENCHMARKS.md "Search for agents"): nDCG@10, MRR@10 and top-1 per query set
 * of the held-out evaluation (bench/catalog/lib/agent-eval-set.ts), for this tree's rank and, side
 * by side, another tree's (the rank before, e.g. a `git archive` of an earlier commit with this
 * node_modules linked in), each on its own fresh SQLite catalog.
 *
 *   npx tsx bench/catalog/agent-eval.ts [--before /path/to/earlier/tree] [--verbose] [--tuning]
 *
 * `--tuning` runs the tuning set (bench/catalog/lib/agent-tuning-set.ts: intent queries the rank's
 * word-vector parameters were chosen on) in place of the evaluation's queries.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EVAL_LISTINGS, EVAL_QUERIES, scores, type EvalSet } from './lib/agent-eval-set.ts';
import { TUNING_QUERIES } from './lib/agent-tuning-set.ts';
import { envelope, evalCatalogOptions } from './lib/ranking-eval-set.ts';

const args = process.argv.slice(2);
const before = args.includes('--before') ? resolve(args[args.indexOf('--before') + 1]!) : undefined;
const verbose = args.includes('--verbose');
const queries = args.includes('--tuning') ? TUNING_QUERIES : EVAL_QUERIES;

/** Queries about services the evaluation catalog lacks: the answer should say nothing relevant matched. */
const ABSENT = [
  'Can you find me a service that translates Klingon poetry into Elvish runes for a fan club newsletter?',
  'I need an API that books a dentist appointment for my dog next Tuesday afternoon, please.',
];

type Page = { resources: Array<{ resource: string; match?: { score: number } }>; relevance?: string };
type Catalog = {
  recordSettlement(e: unknown): Promise<{ status: string } | undefined>;
  search(q: string, f: object, p: { limit: number }): Promise<Page>;
  close(): Promise<void>;
};

async function run(root: string) {
  const { openCatalog } = (await import(join(root, 'src/catalog/index.ts'))) as { openCatalog: (o: object) => Catalog };
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-eval-'));
  let now = Date.parse('2026-03-01T00:00:00Z');
  const catalog = openCatalog(evalCatalogOptions(dir, () => new Date(now)));
  try {
    let tx = 0;
    for (const listing of EVAL_LISTINGS) {
      now += 1_000;
      const outcome = await catalog.recordSettlement({
        ...envelope(listing),
        payment: { payer: `payer-${listing.key}`, id: `tx-${++tx}` },
      });
      if (outcome?.status !== 'success') throw new Error(`${listing.key} was not listed: ${JSON.stringify(outcome)}`);
    }
    const results = [];
    for (const q of queries) {
      const page = await catalog.search(q.query, {}, { limit: 10 });
      const top = page.resources.map((r) => new URL(r.resource).hostname.split('.')[0]!);
      results.push({ q, top, relevance: `${page.relevance ?? ''} ${page.resources[0]?.match?.score ?? ''}`, ...scores(top, q.grades) });
    }
    const absent = [];
    for (const query of ABSENT) {
      const page = await catalog.search(query, {}, { limit: 10 });
      absent.push({
        query,
        results: page.resources.length,
        relevance: `${page.relevance ?? '(none given)'} (best share ${page.resources[0]?.match?.score ?? '-'})`,
      });
    }
    return { results, absent };
  } finally {
    await catalog.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const runs: Array<[string, Awaited<ReturnType<typeof run>>]> = [];
if (before) runs.push(['before', await run(before)]);
runs.push(['now', await run(resolve(import.meta.dirname, '../..'))]);
console.log(
  `| set | queries | ${runs.map(([name]) => `nDCG@10 ${name} | MRR@10 ${name} | top-1 ${name} | irrelevant first ${name}`).join(' | ')} |`,
);
console.log(`| --- | --- | ${runs.map(() => '--- | --- | --- | ---').join(' | ')} |`);
for (const set of (['keyword', 'sentence', 'intent'] as EvalSet[]).filter((s) => queries.some((q) => q.set === s))) {
  const cells = runs.map(([, r]) => {
    const of = r.results.filter((x) => x.q.set === set);
    return `${mean(of.map((x) => x.ndcg)).toFixed(3)} | ${mean(of.map((x) => x.mrr)).toFixed(3)} | ${of.filter((x) => x.top1).length}/${of.length} | ${of.filter((x) => x.irrelevantFirst).length}`;
  });
  console.log(`| ${set} | ${queries.filter((q) => q.set === set).length} | ${cells.join(' | ')} |`);
}
for (const [name, r] of runs)
  for (const a of r.absent) console.log(`${name}: absent service, ${a.results} results, relevance ${a.relevance}: ${a.query}`);
if (verbose)
  for (const [name, r] of runs)
    for (const x of r.results)
      console.log(
        `${name} ${x.q.set} ${x.ndcg.toFixed(2)} ${x.relevance ?? ''} ${x.q.query.slice(0, 50)} → ${x.top.slice(0, 4).join(', ')}`,
      );
