/**
 * svc's RSS idle and under verify load, by Node flags.
 *
 * svc's RSS idle and under verify load, by Node flags (docs/BENCHMARKS.md "svc memory and its Node
 * flags"): compiled svc as `npm start` runs it (scripts/start.sh) against the same svc under plain
 * `node dist/main.js` (the baseline), each a separate process on one devnet, interleaved; with
 * --flags, also `node FLAGS dist/main.js` with start.sh's MALLOC_ARENA_MAX=2 (a flag to try beside
 * what npm start runs); with --before COMMIT, also that commit's build under `npm start`
 * (bench/lib/baseline-build.ts). Idle = VmRSS 3 s after /health answers; under load = VmHWM after
 * SECONDS of valid POST /verify over 16 keep-alive connections.
 *
 *   npm run build && npx tsx bench/ops/svc-rss.ts [--seconds 10] [--rounds 2] [--flags '--max-semi-space-size=2']
 *     [--before COMMIT]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { rssMb } from '../lib/http-load.ts';
import { machine, ROOT } from '../lib/ops-procs.ts';
import { exactTerms } from '../lib/payments.ts';
import { rate, ready } from '../lib/verify-floor-load.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SECONDS = Number(arg('seconds', QUICK ? '1' : '10'));
const ROUNDS = Number(arg('rounds', QUICK ? '1' : '2'));

const devnet = await startDevnet({ ledgerMs: 0 });
const dirs: string[] = [];
try {
  console.log(`machine: ${await machine()}`);
  const seller = await devnet.createAccount({});
  const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 300);
  const valid = JSON.stringify({ x402Version: 2, paymentPayload: await sign(await buyer(10_000_000n)), paymentRequirements: requirements });
  const flags = arg('flags', '').split(' ').filter(Boolean);
  const variants: Array<{ name: string; cmd: string; args: string[]; env?: Record<string, string>; cwd?: string }> = [
    { name: 'node dist/main.js (baseline)', cmd: process.execPath, args: ['dist/main.js'] },
    { name: 'npm start (scripts/start.sh)', cmd: 'sh', args: ['scripts/start.sh'] },
  ];
  if (flags.length)
    variants.push({
      name: `MALLOC_ARENA_MAX=2 node ${flags.join(' ')} dist/main.js`,
      cmd: process.execPath,
      args: [...flags, 'dist/main.js'],
      env: { MALLOC_ARENA_MAX: '2' },
    });
  const before = arg('before', '');
  if (before) variants.push({ name: `${before} under npm start`, cmd: 'sh', args: ['scripts/start.sh'], cwd: baselineBuild(before) });
  const rows: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      const dir = mkdtempSync(join(tmpdir(), 'svc-rss-'));
      dirs.push(dir);
      const submitter = await devnet.createAccount({ usdcTrustline: false });
      const port = await freePort(); // a port drawn at random could be another process's ephemeral one
      const child = spawn(v.cmd, v.args, {
        cwd: v.cwd ?? ROOT,
        env: {
          ...process.env,
          ...v.env,
          PORT: String(port),
          SUBMITTER_SECRET: submitter.secret,
          RPC_URL: devnet.rpcUrl,
          DB_PATH: join(dir, 'svc.sqlite'),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await ready(port, child);
      await new Promise((r) => setTimeout(r, 3000));
      const idle = rssMb(child.pid!);
      const { rps } = await rate({ port, method: 'POST', path: '/verify', body: valid }, 16, SECONDS);
      const peak = rssMb(child.pid!, 'VmHWM');
      await new Promise<void>((r) => (child.once('exit', () => r()), child.kill('SIGTERM')));
      rows.push(`| ${v.name} | ${round + 1} | ${idle.toFixed(0)} | ${peak.toFixed(0)} | ${rps.toFixed(0)} |`);
    }
  }
  console.log('| svc started as | round | idle RSS (MiB) | peak RSS under 16-connection verify load (MiB) | verify req/s |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(`after: ${await machine()}`);
} finally {
  await devnet.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
