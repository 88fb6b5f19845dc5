/**
 * What the catalog benchmarks share (bench/catalog/catalog-quality.ts, catalog-price.ts, liveness-cpu.ts,
 * discovery-flood.ts): the environment of an svc process that only serves discovery, and a pair of
 * catalog files for a before/after comparison, each seeded with its own side's code (the schemas
 * differ between commits; bench/lib/catalog-corpus.ts generates the same corpus on both), and the
 * catalog's part of settle latency measured by each side's own code on a copy of its file.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { baselineBuild } from '../../lib/baseline-build.ts';
import { seedCorpus } from '../../lib/catalog-corpus.ts';
import { copySqlite } from '../../lib/sqlite-copy.ts';
import { request } from '../../lib/http-load.ts';

/**
 * svc's environment for a discovery-only process: no chain (the RPC address answers nothing; discovery
 * reads none), quiet logs, and every listing of the corpus (dated 2026-01-01 on) visible whatever
 * today's date. `extra` adds or overrides variables.
 */
export function discoveryOnlyEnv(port: number, dbPath: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: String(port),
    DB_PATH: dbPath,
    NETWORK: 'stellar:testnet',
    RPC_URL: 'http://127.0.0.1:9',
    SUBMITTER_SECRET: Keypair.random().secret(),
    LOG_LEVEL: 'error',
    LISTING_TTL_DAYS: '36500',
    ...extra,
  };
}

/**
 * A POST /verify body for payTo that svc refuses at decode (its transaction is not XDR): no chain
 * call, all svc's own request pipeline, the /verify of the catalog benchmarks' mixed runs.
 */
export function rejectedVerifyBody(payTo: string): string {
  const requirements = {
    scheme: 'exact',
    network: 'stellar:testnet',
    asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
    amount: '1000',
    payTo,
    maxTimeoutSeconds: 60,
    extra: { areFeesSponsored: true },
  };
  return JSON.stringify({
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      resource: { url: 'https://seller.example/weather' },
      accepted: requirements,
      payload: { transaction: 'AAAA' },
    },
    paymentRequirements: requirements,
  });
}

/** The counts bench/catalog/lib/catalog-flood.ts prints as its last line when it exits (searches answered, and those answered 503). */
export function floodSummary(flood: ChildProcess): Promise<{ searches: number; busy: number }> {
  let text = '';
  flood.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return new Promise((done) =>
    flood.once('exit', () => done(JSON.parse(text.trim().split('\n').at(-1)!) as { searches: number; busy: number })),
  );
}

/**
 * The baseline's build (bench/lib/baseline-build.ts) and a catalog file of `size` listings for each side
 * in `dir`, named with `prefix` and kept there: a file already seeded is reused.
 */
export function seededSides(options: { dir: string; before: string; size: number; prefix: string }): {
  beforeDir: string;
  beforeFile: string;
  afterFile: string;
} {
  const { dir, before, size, prefix } = options;
  mkdirSync(dir, { recursive: true });
  const beforeDir = baselineBuild(before);
  const afterFile = join(dir, `${prefix}after-${size}.sqlite`);
  const beforeFile = join(dir, `${prefix}before-${before}-${size}.sqlite`);
  if (!existsSync(afterFile)) seedCorpus(afterFile, size, (n) => process.stderr.write(`after: seeded ${n}\r`));
  if (!existsSync(beforeFile))
    execFileSync(
      process.execPath,
      ['--import', 'tsx', '-e', `import('./${corpusModule(beforeDir)}').then((m) => m.seedCorpus(${JSON.stringify(beforeFile)}, ${size}))`],
      { cwd: beforeDir, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  return { beforeDir, beforeFile, afterFile };
}

/**
 * Stops the servers and resolves once every one has exited, so their files can be copied (writeLatency):
 * a copy taken while a server still writes its last pages comes out malformed.
 */
export async function stopServers(...servers: ChildProcess[]): Promise<void> {
  await Promise.all(
    servers.map(async (p) => {
      const exited = p.exitCode !== null || p.signalCode !== null ? null : once(p, 'exit');
      p.kill();
      // An svc that does not finish its drain in 10 s (an old baseline's did not) is killed: the
      // benchmark must end, and leave no process holding its port for the next run.
      const kill = setTimeout(() => p.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(kill);
    }),
  );
}

/**
 * `writeListing` latency (bench/catalog/lib/catalog-write-latency.ts, `writes` writes in `mode`) run by the
 * tree at `cwd` on a fresh copy of `file` (bench/lib/sqlite-copy.ts; the svc that served it, its
 * liveness checks writing, may have left committed pages in its -wal).
 */
export function writeLatency(cwd: string, file: string, writes: string, size: number, mode: string): { p50: number; p95: number } {
  const copy = `${file}.writes`;
  copySqlite(file, copy);
  // This checkout's script, run in the tree at `cwd` (it loads that tree's store and corpus): the baseline may predate it.
  const script = resolve('bench/catalog/lib/catalog-write-latency.ts');
  return JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', script, copy, writes, String(size), mode], { cwd, encoding: 'utf8' }),
  ) as { p50: number; p95: number };
}

/** The corpus module of the tree at `dir`, relative to it: bench/lib/ since benchmarks were grouped by area, bench/ before. */
export function corpusModule(dir: string): string {
  return existsSync(join(dir, 'bench/lib/catalog-corpus.ts')) ? 'bench/lib/catalog-corpus.ts' : 'bench/catalog-corpus.ts';
}

/** The path counters (svc_catalog_search_path_total, svc_catalog_list_path_total) of the server at `port` now, by path. */
export async function pathCounters(port: number): Promise<{ search: Map<string, number>; list: Map<string, number> }> {
  const text = (await request(port, 'GET', '/metrics')).text;
  const found = { search: new Map<string, number>(), list: new Map<string, number>() };
  for (const [, kind, labels, value] of text.matchAll(/^svc_catalog_(search|list)_path_total\{([^}]*)\} (\S+)$/gm)) {
    const path = /path="([^"]*)"/.exec(labels!)![1]!;
    found[kind as 'search' | 'list'].set(path, Number(value));
  }
  return found;
}
