/**
 * The shipped alert rules and dashboard (deploy/prometheus, deploy/grafana) with Debian's promtool
 * (package `prometheus`, installed when absent: test/helpers/debian-package.ts): `check rules` and
 * the rules' unit tests pass; every metric the rules and the dashboard use is one a real svc
 * exports (scraped from svc on the devnet); and a submitter whose balance is below the alert's
 * threshold makes SvcAccountBalanceLow fire in a promtool unit test whose input series are that
 * scrape's samples.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error the package ships no type declarations; the shape used is `Metric` below.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { api } from '../helpers/contract.ts';
import { ensureDebianTool } from '../helpers/debian-package.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

interface Metric {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string }>;
}

const ROOT = new URL('../..', import.meta.url).pathname;
const RULES = join(ROOT, 'deploy/prometheus/svc-alerts.yml');
const RULE_TESTS = join(ROOT, 'deploy/prometheus/svc-alerts.test.yml');
const DASHBOARD = join(ROOT, 'deploy/grafana/svc-dashboard.json');
const READY_MIN = 50_000_000n;

let promtool: string;
let devnet: Devnet;
let svc: TestServer;
let low: string;
let scraped: Metric[];
/** The last scrape's text, as Prometheus reads it. */
let scrapedText: string;

function run(...args: string[]): string {
  return execFileSync(promtool, args, { cwd: join(ROOT, 'deploy/prometheus'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The metric names an expression names (identifiers followed by a selector or an operator, not functions or labels). */
function metricNames(expr: string): string[] {
  const withoutStrings = expr
    .replace(/"[^"]*"/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]');
  const keywords = new Set([
    'sum',
    'by',
    'on',
    'group_left',
    'unless',
    'and',
    'or',
    'rate',
    'increase',
    'deriv',
    'histogram_quantile',
    'le',
    'without',
  ]);
  return [...withoutStrings.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .map((m) => m[0])
    .filter(
      (name) =>
        !keywords.has(name) &&
        !/^(instance|job|network|code|outcome|status|route|role|account|budget|source|level|state|reason)$/.test(name),
    )
    .filter((name, i, all) => all.indexOf(name) === i);
}

beforeAll(async () => {
  promtool = ensureDebianTool('/usr/bin/promtool', 'prometheus');
  devnet = await startDevnet({ ledgerMs: 1000 });
  const healthy = await devnet.createAccount({ usdcTrustline: false });
  // Drained: above /ready's minimum, below the alert's threshold (twice it).
  const drained = await devnet.createAccount({ usdcTrustline: false, xlmStroops: READY_MIN + READY_MIN / 5n });
  low = drained.publicKey;
  svc = await startTestServer({
    config: testConfig({
      RPC_URL: devnet.rpcUrl,
      SUBMITTER_SECRET: `${healthy.secret},${drained.secret}`,
      READY_MIN_BALANCE_STROOPS: String(READY_MIN),
      LIVENESS_CHECKS_PER_MINUTE: '30', // on, as by default, for svc_liveness_checks_due (the catalog is empty: nothing is probed)
      LISTING_OWNERSHIP: 'origin', // the default, for the ownership claims' gauges
      DB_PATH: join(mkdtempSync(join(tmpdir(), 'svc-rules-')), 'svc.sqlite'),
    }),
  });
  // The catalog's gauges are read by a reader thread that boots on the first scrape, within a
  // deadline: on a loaded machine the first scrape may come back without them (absent, as
  // documented, not zero), and Prometheus' next scrape has them. Scrape as it would, for 30 s at most.
  for (let i = 0; i < 60; i++) {
    scrapedText = (await api(svc.url).get('/metrics')).text;
    scraped = parsePrometheusTextFormat(scrapedText) as Metric[];
    if (
      ['svc_catalog_listings', 'svc_liveness_checks_due', 'svc_ownership_oldest_claim_age_seconds'].every((name) =>
        scraped.some((m) => m.name === name && m.metrics.length > 0),
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 600_000);

afterAll(async () => {
  await svc?.close();
  await devnet?.stop();
});

describe('deploy/prometheus and deploy/grafana', () => {
  it('promtool check rules and promtool test rules pass', () => {
    expect(run('check', 'rules', RULES)).toMatch(/SUCCESS: \d+ rules found/);
    expect(run('test', 'rules', RULE_TESTS)).toMatch(/SUCCESS/);
  });

  it("promtool check metrics finds nothing to fix in svc's /metrics (its own metrics and Node's process metrics)", () => {
    const check = spawnSync(promtool, ['check', 'metrics'], { input: scrapedText, encoding: 'utf8' });
    expect({ status: check.status, problems: `${check.stdout}${check.stderr}`.trim() }).toEqual({ status: 0, problems: '' });
  });

  it('every metric the rules and the dashboard use is one svc exports', () => {
    const exported = new Set(
      scraped.flatMap((m) => (m.type === 'HISTOGRAM' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name])),
    );
    exported.add('up'); // Prometheus' own, for every target it scrapes
    const rules = (readFileSync(RULES, 'utf8').match(/expr: (>-\n(?: {10}.*\n)+|.*)/g) ?? []).map((e) => e.replace(/^expr: (>-)?/, ''));
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const exprs = [...rules, ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))];
    expect(rules.length).toBeGreaterThanOrEqual(10);
    const used = [...new Set(exprs.flatMap(metricNames))];
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('the per-payTo fee budgets are a summary with a fixed set of series, not one per payTo', () => {
    const series = (name: string) => scraped.find((m) => m.name === name)?.metrics.map((s) => s.labels) ?? [];
    const network = 'stellar:testnet';
    expect(series('svc_fee_budget_paytos')).toEqual(
      expect.arrayContaining(['sponsored', 'near_cap', 'at_cap'].map((level) => ({ network, level }))),
    );
    expect(series('svc_fee_budget_paytos')).toHaveLength(3);
    expect(series('svc_fee_budget_payto_largest_stroops')).toEqual([{ network }]);
    expect(series('svc_fee_budget_cap_stroops')).toContainEqual({ network, budget: 'payto' });
  });

  it('the catalog exports its listings by state and the liveness checks due', () => {
    const series = (name: string) => scraped.find((m) => m.name === name)?.metrics.map((s) => s.labels) ?? [];
    expect(series('svc_catalog_listings')).toEqual([
      { state: 'listed', reason: '' },
      { state: 'pending', reason: '' },
      { state: 'hidden', reason: 'expired' },
      { state: 'hidden', reason: 'liveness' },
    ]);
    expect(series('svc_liveness_checks_due')).toHaveLength(1);
  });

  it("a submitter below the alert's threshold, as scraped from svc on the devnet, fires SvcAccountBalanceLow; the healthy one does not", () => {
    const series = scraped
      .filter((m) => m.name === 'svc_account_balance_stroops' || m.name === 'svc_ready_min_balance_stroops')
      .flatMap((m) =>
        m.metrics.map((s) => {
          const labels = { ...s.labels, instance: 'svc', job: 'svc' };
          const selector = Object.entries(labels)
            .map(([k, v]) => `${k}="${v}"`)
            .join(', ');
          return { series: `${m.name}{${selector}}`, values: `${s.value}x15` };
        }),
      );
    const balances = series.filter((s) => s.series.startsWith('svc_account_balance_stroops'));
    expect(balances).toHaveLength(2);
    expect(balances.find((s) => s.series.includes(low))!.values).toMatch(new RegExp(`^${READY_MIN + READY_MIN / 5n}x15$`));
    const dir = mkdtempSync(join(tmpdir(), 'svc-promtool-'));
    try {
      const file = join(dir, 'scrape.test.yml');
      writeFileSync(
        file,
        stringify({
          rule_files: [RULES],
          evaluation_interval: '1m',
          tests: [
            {
              interval: '1m',
              input_series: series,
              alert_rule_test: [
                {
                  eval_time: '10m',
                  alertname: 'SvcAccountBalanceLow',
                  exp_alerts: [
                    {
                      exp_labels: {
                        severity: 'page',
                        instance: 'svc',
                        job: 'svc',
                        network: 'stellar:testnet',
                        account: low,
                        role: 'submitter',
                      },
                      exp_annotations: { summary: `submitter ${low} holds 60M stroops, under twice the readiness minimum` },
                    },
                  ],
                },
              ],
            },
          ],
        }),
      );
      expect(run('test', 'rules', file)).toMatch(/SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
