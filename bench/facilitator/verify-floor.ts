/**
 * Verify and cheap requests over HTTP against their floors, against a baseline commit.
 *
 * Verify and cheap requests against their floors (docs/BENCHMARKS.md "Verify and cheap requests
 * against their floors"), closed loop over keep-alive HTTP, at 1 and 16 connections:
 *
 *   npm run build && npx tsx bench/facilitator/verify-floor.ts [--seconds 3] [--rounds 2] [--baseline <git revision>] [--only valid,rejected,supported]
 *
 * - a valid POST /verify against the floor: the same RPC (the devnet, in this process) answering
 *   `simulateTransaction` for the same envelope;
 * - a rejected POST /verify (requirements that the payload does not pay) and GET /supported against
 *   a bare node:http server (its own process) answering the same status and bytes.
 * svc runs as users start it (compiled, LOG_LEVEL info, logs to a pipe that is drained), this tree
 * and a baseline revision (built the same way), each measurement interleaved round by round.
 * Beside the rates, svc's CPU per request (its process's user + system time over the requests it
 * answered): on a shared machine a rate moves with the other load, the CPU a request costs far less.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { exportRevision, machine, ROOT } from '../lib/ops-procs.ts';
import { exactTerms } from '../lib/payments.ts';
import { rate, ready, type Target } from '../lib/verify-floor-load.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SECONDS = Number(arg('seconds', QUICK ? '0.5' : '3'));
const ROUNDS = Number(arg('rounds', QUICK ? '1' : '2'));
const BASELINE = arg('baseline', QUICK ? '.' : 'main');
/** Which requests to measure (default all): `valid`, `rejected`, `supported`, comma-separated. */
const ONLY = arg('only', 'valid,rejected,supported').split(',');

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** A process's CPU seconds so far, user + system, all its threads (/proc/<pid>/stat fields 14 and 15). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** A bare node:http server in its own process answering every request with `status` and `body`. */
function bare(status: number, body: string): Promise<{ port: number; stop(): void }> {
  const code = `const b=Buffer.from(${JSON.stringify(body)});require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(${status},{'content-type':'application/json','content-length':b.length});s.end(b)})}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve({ port: Number(String(d).trim()), stop: () => child.kill() })),
  );
}

function svc(cwd: string, env: Record<string, string>, port: number) {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.resume();
  return { port, child, stop: () => new Promise<void>((r) => (child.once('exit', () => r()), child.kill('SIGTERM'))) };
}

const baseline = exportRevision(BASELINE);
const dirs: string[] = [];
try {
  console.log(`machine: ${await machine()}`);
  if (baseline.dir !== ROOT) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: baseline.dir, stdio: 'ignore' });
  const devnet = await startDevnet({ ledgerMs: 0 });
  const seller = await devnet.createAccount({});
  const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 300);
  const payload = (await sign(await buyer(10_000_000n))) as unknown as { payload: { transaction: string } };
  const valid = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
  const rejected = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: { ...requirements, amount: '999' } });
  const simulate = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'simulateTransaction',
    params: { transaction: payload.payload.transaction },
  });
  const rpcPort = Number(new URL(devnet.rpcUrl).port);

  const services = [];
  for (const [name, cwd] of [
    ['this tree', ROOT],
    [`baseline ${BASELINE}`, baseline.dir],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-floor-'));
    dirs.push(dir);
    const submitter = await devnet.createAccount({ usdcTrustline: false });
    const s = svc(
      cwd,
      { SUBMITTER_SECRET: submitter.secret, RPC_URL: devnet.rpcUrl, DB_PATH: join(dir, 'svc.sqlite') },
      await freePort(), // a port drawn at random could be another process's ephemeral one
    );
    await ready(s.port, s.child);
    services.push({ name, ...s });
  }
  const sample = async (port: number, method: 'GET' | 'POST', path: string, body?: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      body,
      headers: body ? { 'content-type': 'application/json' } : {},
    });
    return { status: res.status, text: await res.text() };
  };
  const supported = await sample(services[0]!.port, 'GET', '/supported');
  const rejection = await sample(services[0]!.port, 'POST', '/verify', rejected);
  const validAnswer = await sample(services[0]!.port, 'POST', '/verify', valid);
  console.log(`valid verify: ${validAnswer.text.slice(0, 80)}; rejected verify: ${rejection.status} ${rejection.text.slice(0, 100)}`);
  const bareSupported = await bare(supported.status, supported.text);
  const bareRejected = await bare(rejection.status, rejection.text);

  const cases = [
    {
      key: 'valid',
      name: 'valid POST /verify',
      floorName: 'simulateTransaction (floor)',
      floor: { port: rpcPort, method: 'POST', path: '/', body: simulate },
      target: (port: number) => ({ port, method: 'POST', path: '/verify', body: valid }),
    },
    {
      key: 'rejected',
      name: 'rejected POST /verify',
      floorName: 'bare node:http',
      floor: { port: bareRejected.port, method: 'POST', path: '/verify', body: rejected },
      target: (port: number) => ({ port, method: 'POST', path: '/verify', body: rejected }),
    },
    {
      key: 'supported',
      name: 'GET /supported',
      floorName: 'bare node:http',
      floor: { port: bareSupported.port, method: 'GET', path: '/supported' },
      target: (port: number) => ({ port, method: 'GET', path: '/supported' }),
    },
  ] as const;
  const measured = cases.filter((c) => ONLY.includes(c.key));
  const sums = new Map<string, number[]>();
  const add = (k: string, v: number) => sums.set(k, [...(sums.get(k) ?? []), v]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of measured) {
      for (const conns of [1, 16]) {
        add(`${c.name}|${conns}|floor`, (await rate(c.floor, conns, SECONDS)).rps);
        for (const s of services) {
          const cpuBefore = cpuSeconds(s.child.pid!);
          const r = await rate(c.target(s.port) as Target, conns, SECONDS);
          if (r.bad) console.log(`${s.name} ${c.name}: ${r.bad} answers ≥ 500`);
          add(`${c.name}|${conns}|${s.name}`, r.rps);
          add(`${c.name}|${conns}|${s.name}|cpu`, ((cpuSeconds(s.child.pid!) - cpuBefore) * 1e6) / (r.rps * SECONDS));
        }
      }
    }
  }
  const avg = (k: string) => (sums.get(k) ?? [0]).reduce((a, b) => a + b, 0) / (sums.get(k)?.length ?? 1);
  console.log(
    '| request | connections | floor | floor req/s | this tree req/s | ÷ floor | baseline req/s | ÷ floor | this tree ÷ baseline |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const c of measured) {
    for (const conns of [1, 16]) {
      const f = avg(`${c.name}|${conns}|floor`);
      const t = avg(`${c.name}|${conns}|this tree`);
      const b = avg(`${c.name}|${conns}|baseline ${BASELINE}`);
      console.log(
        `| ${c.name} | ${conns} | ${c.floorName} | ${f.toFixed(0)} | ${t.toFixed(0)} | ${(t / f).toFixed(2)} | ${b.toFixed(0)} | ${(b / f).toFixed(2)} | ${(t / b).toFixed(2)} |`,
      );
    }
  }
  console.log('\n| request | connections | svc CPU per request, this tree (µs) | baseline (µs) | this tree ÷ baseline |');
  console.log('|---|---|---|---|---|');
  for (const c of measured) {
    for (const conns of [1, 16]) {
      const t = avg(`${c.name}|${conns}|this tree|cpu`);
      const b = avg(`${c.name}|${conns}|baseline ${BASELINE}|cpu`);
      console.log(`| ${c.name} | ${conns} | ${t.toFixed(0)} | ${b.toFixed(0)} | ${(t / b).toFixed(2)} |`);
    }
  }
  console.log(`after: ${await machine()}`);
  for (const s of services) await s.stop();
  bareSupported.stop();
  bareRejected.stop();
  await devnet.stop();
} finally {
  baseline.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
