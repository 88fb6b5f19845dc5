/**
 * Where svc's CPU goes under one verify-floor load (a CPU profile summed by function and package).
 *
 * Where svc's CPU goes under one load of bench/facilitator/verify-floor.ts (docs/BENCHMARKS.md "Verify and
 * cheap requests against their floors"): svc (this tree, compiled) runs under `node --cpu-prof`
 * while a closed loop sends one kind of request; the profile is then summed by function (self
 * time) and by the package each function comes from.
 *
 *   npm run build && npx tsx bench/facilitator/verify-profile.ts --case rejected|valid|supported [--conns 16] [--seconds 10] [--top 40]
 *
 * The .cpuprofile stays in the printed directory (open it in Chrome DevTools for the call tree).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { machine, ROOT } from '../lib/ops-procs.ts';
import { exactTerms } from '../lib/payments.ts';
import { rate, ready, type Target } from '../lib/verify-floor-load.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const CASE = arg('case', 'rejected');
const CONNS = Number(arg('conns', QUICK ? '2' : '16'));
const SECONDS = Number(arg('seconds', QUICK ? '1' : '10'));
const TOP = Number(arg('top', QUICK ? '5' : '40'));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * The module a line of dist/main.js belongs to: esbuild heads each bundled module with a
 * `// path/of/the/module.js` comment, so the last such comment above a line names it, shortened to
 * the package (node_modules) or the svc source file.
 */
function moduleOfLine(bundle: string): (line: number) => string {
  const starts: Array<{ line: number; name: string }> = [];
  bundle.split('\n').forEach((text, i) => {
    const m = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(text);
    if (!m) return;
    const path = m[1]!;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    starts.push({ line: i, name: pkg ? pkg[1]! : path.replace(/^.*?src\//, 'src/') });
  });
  return (line) => {
    let name = '(svc bundle head)';
    for (const s of starts) {
      if (s.line > line) break;
      name = s.name;
    }
    return name;
  };
}

console.log(`machine: ${await machine()}`);
const devnet = await startDevnet({ ledgerMs: 0 });
const seller = await devnet.createAccount({});
const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 300);
const payload = (await sign(await buyer(10_000_000n))) as unknown as { payload: { transaction: string } };
const valid = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
const rejected = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: { ...requirements, amount: '999' } });
const profileDir = mkdtempSync(join(tmpdir(), 'svc-profile-'));
const dbDir = mkdtempSync(join(tmpdir(), 'svc-profile-db-'));
const submitter = await devnet.createAccount({ usdcTrustline: false });
const port = await freePort(); // a port drawn at random could be another process's ephemeral one
const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profileDir, 'dist/main.js'], {
  cwd: ROOT,
  env: {
    ...process.env,
    LOG_LEVEL: 'info',
    SUBMITTER_SECRET: submitter.secret,
    RPC_URL: devnet.rpcUrl,
    DB_PATH: join(dbDir, 'svc.sqlite'),
    PORT: String(port),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
child.stdout.resume();
await ready(port, child);
const target: Target =
  CASE === 'supported'
    ? { port, method: 'GET', path: '/supported' }
    : { port, method: 'POST', path: '/verify', body: CASE === 'valid' ? valid : rejected };
await rate(target, CONNS, 2); // warm-up
// The profile's clock is the monotonic clock in µs: only the samples taken during the measured load count.
const loadFrom = Number(process.hrtime.bigint() / 1000n);
const { rps } = await rate(target, CONNS, SECONDS);
const loadTo = Number(process.hrtime.bigint() / 1000n);
console.log(`${CASE} at ${CONNS} connections: ${rps.toFixed(0)} req/s`);
await new Promise<void>((r) => (child.once('exit', () => r()), child.kill('SIGTERM')));
await devnet.stop();

const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile in ${profileDir}`);
const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile;
const moduleOf = moduleOfLine(readFileSync(join(ROOT, 'dist/main.js'), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at >= loadFrom && at <= loadTo) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});
if (selfUs.size === 0) throw new Error('no profile samples fall inside the load (clocks differ?)');
let total = 0;
let idle = 0;
const byFunction = new Map<string, number>();
const byBucket = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  total += us;
  if (functionName === '(idle)') {
    idle += us;
    continue;
  }
  const where = url.endsWith('dist/main.js') ? moduleOf(lineNumber) : url.replace(/^.*\//, '');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const bucket = !url ? '(native/gc)' : url.endsWith('dist/main.js') ? moduleOf(lineNumber) : url.replace(/^.*\//, '');
  byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + us);
}
const busy = total - idle;
const show = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .forEach(([k, us]) => console.log(`${((100 * us) / busy).toFixed(1).padStart(5)} %  ${k}`));
console.log(
  `profile ${join(profileDir, file)}: during the load, busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s; ${(busy / (rps * SECONDS)) | 0} µs per request`,
);
console.log('--- self time by function (% of busy)');
show(byFunction, TOP);
// Inclusive time: each sample counts once for every distinct function on its stack.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const { functionName, url, lineNumber } = byId.get(at)!.callFrame;
    if (!functionName) continue;
    const where = url.endsWith('dist/main.js') ? moduleOf(lineNumber) : url.replace(/^.*\//, '');
    seen.add(`${functionName} ${where}:${lineNumber + 1}`);
  }
  for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + us);
}
console.log('--- inclusive time by function (% of busy)');
show(inclusive, TOP * 2);
console.log('--- by module');
show(byBucket, 25);
