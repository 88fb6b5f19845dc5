/**
 * Spawn → /ready of `npm start`, fresh and migrated database, against a baseline commit's build.
 *
 * Startup to ready (docs/BENCHMARKS.md):
 *
 *   npm run build && npm run bench -- start [--runs 7] [--baseline <git revision>] [--quick]
 *
 * svc runs as a separate process on a devnet with 1 s ledgers, started the way an operator does:
 * `npm start` in this checkout, and `npm start` in the baseline revision's tree built with its own
 * `npm run build` (bench/lib/baseline-build.ts). Each run times spawn → first answer on /ready
 * (listening) and → first 200 on /ready (every readiness check passed), polled every 5 ms from
 * outside, and reads the CPU the svc process had used by then (/proc: utime + stime of the node
 * process and its threads), which a busy machine inflates less than wall time. Two database
 * cases: `fresh` (an empty DB_PATH, so every migration runs) and `migrated` (the DB_PATH a
 * previous start of the same tree left). Trees alternate run by run; the first start of each tree
 * is not counted (it fills Node's compile cache, as the first start after a deploy does).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { machine, ROOT } from '../lib/ops-procs.ts';
import { QUICK, THIS_CHECKOUT } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const RUNS = Number(arg('runs', QUICK ? '1' : '7'));
/** main before the lazy modules, OpenSSL key derivation and readiness-first ordering of docs/OPERATIONS.md "Startup". */
const BASELINE = arg('baseline', QUICK ? THIS_CHECKOUT : '9bba5a6');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** CPU ms (user + system, all threads) process `pid` has used; 0 when it cannot be read. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks, USER_HZ 100
  } catch {
    return 0;
  }
}

/** The node process `npm start` became (npm → sh → exec node): npm's youngest descendant. */
function svcPid(npmPid: number): number {
  let pid = npmPid;
  for (;;) {
    let children: string[];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      return pid;
    }
    if (children.length === 0) return pid;
    pid = Number(children[0]);
  }
}

interface Run {
  listening: number;
  ready: number;
  cpu: number;
}

async function startOnce(dir: string, env: Record<string, string>): Promise<Run> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/ready`;
  const started = performance.now();
  const child = spawn(NPM, ['start', '--silent'], {
    cwd: dir,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let listening: number | undefined;
  try {
    for (;;) {
      if (performance.now() - started > 60_000) throw new Error(`svc in ${dir} not ready within 60 s`);
      if (child.exitCode !== null) throw new Error(`svc in ${dir} exited ${child.exitCode} before it was ready`);
      try {
        const status = (await fetch(url)).status;
        listening ??= performance.now() - started;
        if (status === 200) break;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const ready = performance.now() - started;
    return { listening: listening ?? ready, ready, cpu: cpuMs(svcPid(child.pid!)) };
  } finally {
    child.kill('SIGTERM'); // npm start execs into node: the signal reaches svc, which drains and exits
    await exited;
  }
}

const trees = [
  { name: 'this checkout', dir: ROOT },
  // Quick mode's baseline is this checkout: started once, not twice.
  ...(BASELINE === THIS_CHECKOUT ? [] : [{ name: `baseline ${BASELINE}`, dir: baselineBuild(BASELINE) }]),
];
const cases = ['fresh', 'migrated'] as const;
const devnet = await startDevnet({ ledgerMs: 1000 });
const submitter = await devnet.createAccount({ usdcTrustline: false });
const work = mkdtempSync(join(tmpdir(), 'svc-start-'));
const results = new Map<string, Run[]>();
try {
  console.log(`machine: ${await machine()}`);
  const env = (db: string) => ({ SUBMITTER_SECRET: submitter.secret, RPC_URL: devnet.rpcUrl, DB_PATH: db });
  const migratedDb = (t: number) => join(work, `migrated-${t}.sqlite`);
  // Not counted: fills each tree's compile cache and migrates its `migrated` database.
  for (const [t, tree] of trees.entries()) await startOnce(tree.dir, env(migratedDb(t)));
  for (let i = 0; i < RUNS; i++) {
    for (const [t, tree] of trees.entries()) {
      for (const dbCase of cases) {
        const db = dbCase === 'migrated' ? migratedDb(t) : join(work, `fresh-${t}-${i}.sqlite`);
        const run = await startOnce(tree.dir, env(db));
        const key = `${tree.name}|${dbCase}`;
        results.set(key, [...(results.get(key) ?? []), run]);
      }
    }
  }
  console.log(`seed: none (no random inputs); runs: ${RUNS} per tree and database`);
  console.log('| tree | database | median to listening | median to ready | min–max to ready | median CPU to ready |');
  console.log('|---|---|---|---|---|---|');
  for (const [key, runs] of results) {
    const [tree, dbCase] = key.split('|');
    const ready = runs.map((r) => r.ready);
    console.log(
      `| ${tree} | ${dbCase} | ${median(runs.map((r) => r.listening)).toFixed(0)} ms | ${median(ready).toFixed(0)} ms | ${Math.min(...ready).toFixed(0)}–${Math.max(...ready).toFixed(0)} ms | ${median(runs.map((r) => r.cpu)).toFixed(0)} ms |`,
    );
  }
  for (const dbCase of trees.length > 1 ? cases : []) {
    const ratio = (of: (run: Run) => number) =>
      (median(results.get(`${trees[0]!.name}|${dbCase}`)!.map(of)) / median(results.get(`${trees[1]!.name}|${dbCase}`)!.map(of))).toFixed(
        2,
      );
    // CPU too: a busy machine stretches wall time far more than the CPU the work takes.
    console.log(`${dbCase}: median to ready ${ratio((r) => r.ready)}× the baseline's, CPU to ready ${ratio((r) => r.cpu)}×`);
  }
  console.log(`after: ${await machine()}`);
} finally {
  await devnet.stop();
  rmSync(work, { recursive: true, force: true });
}
