/**
 * The explorer page's keystroke-to-result time in headless Chromium, large catalog beside a small one.
 *
 * The catalog explorer's search as a person sees it: in headless Chromium (playwright-core, the
 * Chromium the test setup installs), type a query into GET / and time from the last keystroke to
 * the first result on screen (the page's own 150 ms typing pause included). Two svc processes side
 * by side in one run, each on its own generated catalog (bench/lib/catalog-corpus.ts): 100,000
 * listings and a 1,000-listing baseline. Also reported: the bare GET /discovery/search time of the
 * same query measured by fetch inside the same page (what the page waits for).
 *
 *   npx tsx bench/explorer/explorer.ts [listings=100000] [queries=30]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM_PATH, ensureChromium } from '../../src/dev/chromium.ts';
import { seedCorpus, vocabularyWord } from '../lib/catalog-corpus.ts';
import { startSoakProcess } from '../lib/soak-process.ts';
import { argsWithoutQuick, QUICK } from '../lib/quick.ts';

const LISTINGS = Number(argsWithoutQuick()[0] ?? (QUICK ? 300 : 100_000));
const QUERIES = Number(argsWithoutQuick()[1] ?? (QUICK ? 2 : 30));

/** Common, mid-frequency and rare words, one and two terms, as people type them. */
function queries(): string[] {
  const out: string[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const a = vocabularyWord([0, 3, 40, 400, 4000][i % 5]! + i);
    out.push(i % 2 ? `${a} ${vocabularyWord(i % 7)}` : a);
  }
  return out;
}

/** Types `query` and returns [ms from the last keystroke to the first result rendered, ms of a bare fetch of the same search]. */
async function timeQuery(page: Page, query: string): Promise<[number, number]> {
  await page.locator('#query').fill('');
  await page.locator('#status').filter({ hasNotText: 'Results for' }).waitFor();
  // Resolves on the status line naming the query (results or none), or on an error line, so a
  // refused search stops the bench with the page's own message instead of waiting forever.
  await page.evaluate(`window.__firstResult = new Promise((resolve) => {
    const status = document.getElementById('status');
    const observer = new MutationObserver(() => {
      const text = status.textContent;
      if (text.includes(${JSON.stringify(query)}) || text.startsWith('The catalog did not answer') || text.startsWith('The catalog refused')) {
        observer.disconnect();
        resolve([performance.now(), text]);
      }
    });
    observer.observe(status, { childList: true, characterData: true, subtree: true });
  }); undefined`); // the trailing undefined: evaluate would otherwise await the promise before any typing
  await page.locator('#query').pressSequentially(query, { delay: 40 });
  const typedAt = await page.evaluate<number>('performance.now()');
  const [shownAt, text] = await page.evaluate<[number, string]>(
    `Promise.race([window.__firstResult, new Promise((r) => setTimeout(() => r([NaN, 'no answer within 20 s: ' + document.getElementById('status').textContent]), 20000))])`,
  );
  if (!text.includes(query)) throw new Error(`search for ${JSON.stringify(query)}: ${text}`);
  const bare = await page.evaluate<number>(`(async () => {
    const t = performance.now();
    await (await fetch('/discovery/search?' + new URLSearchParams({ query: ${JSON.stringify(query)}, limit: '20' }))).json();
    return performance.now() - t;
  })()`);
  return [shownAt - typedAt, bare];
}

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function run(label: string, count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-explorer-bench-'));
  const dbPath = join(dir, 'catalog.sqlite');
  const seeded = performance.now();
  seedCorpus(dbPath, count);
  const seedSeconds = (performance.now() - seeded) / 1000;
  const svc = await startSoakProcess(dbPath);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const loadStart = performance.now();
    await page.goto(`${svc.url}/`);
    await page.locator('#results .listing').first().waitFor();
    const firstPaintMs = performance.now() - loadStart;
    const shown: number[] = [];
    const bare: number[] = [];
    for (const q of queries()) {
      const [s, b] = await timeQuery(page, q);
      process.stderr.write(`${label}: ${JSON.stringify(q)} first result ${s.toFixed(0)} ms, bare ${b.toFixed(0)} ms\n`);
      shown.push(s);
      bare.push(b);
    }
    return {
      label,
      count,
      seedSeconds,
      firstPaintMs,
      shownP50: pct(shown, 0.5),
      shownP95: pct(shown, 0.95),
      shownMax: Math.max(...shown),
      bareP50: pct(bare, 0.5),
      bareP95: pct(bare, 0.95),
    };
  } finally {
    await browser.close();
    svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

ensureChromium();
const before = loadavg();
const big = await run(`${LISTINGS.toLocaleString('en')} listings`, LISTINGS);
const baseline = await run(`${QUICK ? 100 : 1_000} listings (baseline)`, QUICK ? 100 : 1_000);
const after = loadavg();
const f = (n: number) => n.toFixed(1);
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model}; load average before ${before.map(f).join(' ')}, after ${after.map(f).join(' ')}`,
);
console.log(
  `${QUERIES} queries typed at 40 ms per key; "first result" = last keystroke → results on screen (includes the page's 150 ms typing pause)`,
);
console.log('| catalog | page load → first listing ms | first result p50 / p95 / max ms | bare search fetch p50 / p95 ms |');
console.log('|---|---|---|---|');
for (const r of [big, baseline]) {
  console.log(
    `| ${r.label} | ${f(r.firstPaintMs)} | ${f(r.shownP50)} / ${f(r.shownP95)} / ${f(r.shownMax)} | ${f(r.bareP50)} / ${f(r.bareP95)} |`,
  );
}
console.log(
  `first-result p95 ratio ${LISTINGS.toLocaleString('en')} / baseline: ${(big.shownP95 / baseline.shownP95).toFixed(2)}; target ≤ 300 ms: ${big.shownP95 <= 300}`,
);
