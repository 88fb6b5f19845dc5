/**
 * svc as real processes for the process-level tests: start what `npm start` runs (dist/main.js,
 * built from the current sources by the global setup; from source under tsx each start took
 * seconds longer), or `npm start` itself in a process group of its own, on a free port and wait
 * for it to listen, sign payments that carry a bazaar extension, settle with an Idempotency-Key,
 * and poll until a condition holds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Keypair } from '@stellar/stellar-sdk';
import { httpBazaar } from '../catalog/fixtures.ts';
import type { SchemeHarness } from '../scheme/harness.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { freePort } from '../../src/dev/postgres.ts';

export { freePort } from '../../src/dev/postgres.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface Svc {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** Everything the process has written to stdout and stderr so far. */
  output: () => string;
}

export interface StartOptions {
  /**
   * Run `npm start` (package.json "start") as the leader of a new process group, as a terminal or
   * a supervisor runs it: `process.kill(-svc.child.pid, signal)` then signals npm and svc together.
   */
  npmStart?: boolean;
}

/**
 * Starts svc on the devnet at `rpcUrl` with `env` on top of a minimal environment. A free port may be taken by another
 * process between freePort's check and svc's bind (svc then exits 75 saying so): svc is started again on another.
 */
export async function startSvc(rpcUrl: string, env: Record<string, string>, options: StartOptions = {}): Promise<Svc> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(await freePort(), rpcUrl, env, options);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw err;
    }
  }
}

const PORT_ATTEMPTS = 5;
class PortTaken extends Error {}

async function startOnPort(port: number, rpcUrl: string, env: Record<string, string>, options: StartOptions): Promise<Svc> {
  const [command, args] = options.npmStart ? ['npm', ['start', '--silent']] : [process.execPath, ['dist/main.js']];
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: options.npmStart === true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'info',
      PORT: String(port),
      RPC_URL: rpcUrl,
      RECONCILE_INTERVAL_MS: '200',
      // The first settlement owns a listing, so a settlement of a made-up URL lists it at once
      // (test/helpers/server.ts testConfig says the same; ownership from the origin has its own tests).
      LISTING_OWNERSHIP: 'first-settlement',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const listening = () => {
      if (out.includes('svc listening')) {
        child.stdout.off('data', listening);
        resolve();
      }
    };
    child.stdout.on('data', listening);
    void exited.then((code) => {
      const message = `svc exited ${code} before listening: ${out.slice(-500)}`;
      reject(code === 75 && out.includes(`port ${port} is in use by another process`) ? new PortTaken(message) : new Error(message));
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, exited, output: () => out };
}

export interface Payment {
  seller: Keypair;
  url: string;
  payload: PaymentPayload;
  req: PaymentRequirements;
  key: string;
}

/** `n` payments of 100,000 units, each by a new buyer to a new seller, each listing its own resource. */
export async function payments(h: SchemeHarness, n: number, maxTimeoutSeconds: number): Promise<Payment[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const { buyer, seller } = await h.parties();
      const req = h.requirements(seller.publicKey(), { maxTimeoutSeconds });
      const url = `https://api.example.com/journal/${seller.publicKey().slice(0, 12)}`;
      const paid = await h.pay(req, buyer);
      return {
        seller,
        url,
        req,
        key: `key-${i}-${seller.publicKey().slice(0, 8)}`,
        payload: { ...paid, resource: { url, description: 'Journal test' }, extensions: { bazaar: httpBazaar() } },
      };
    }),
  );
}

export const settle = (url: string, p: Payment) =>
  fetch(`${url}/settle`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Idempotency-Key': p.key },
    body: JSON.stringify({ x402Version: 2, paymentPayload: p.payload, paymentRequirements: p.req }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

/** The sum of a metric's samples in a Prometheus text page. */
function metricSum(page: string, name: string): number {
  return page
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * Waits until `n` settles have reached svc's submitter pool (answered, holding a submitter or
 * queued for one), read from GET /metrics: all n connections are then accepted, so a signal that
 * closes the listener cuts none of them (a fixed sleep was too short on a loaded machine). Returns
 * how many are still in flight.
 */
export async function settlesInside(svc: Svc, n: number): Promise<number> {
  return until(`${n} settles inside svc`, async () => {
    const page = await (await fetch(`${svc.url}/metrics`)).text();
    const inFlight = metricSum(page, 'svc_submitter_pool_in_use') + metricSum(page, 'svc_submitter_pool_queued');
    return inFlight + metricSum(page, 'svc_settle_outcomes_total') >= n ? inFlight : undefined;
  });
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
