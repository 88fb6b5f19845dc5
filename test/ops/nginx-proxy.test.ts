/**
 * svc behind a real nginx (Debian's package, installed when absent: test/helpers/debian-package.ts),
 * configured as docs/OPERATIONS.md "Behind a reverse proxy" says, with `TRUSTED_PROXIES` naming
 * nginx's address. Clients reach nginx from addresses of their own on loopback (127.0.0.x), so
 * every per-client budget is spent by the client nginx names, and only when nginx names it.
 * POST /discovery/validate with an empty body is answered 400 within the budget (the rate limit
 * comes before the body is read) and 429 past it: nothing is ever requested of a target.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDebianTool } from '../helpers/debian-package.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { freePort } from '../helpers/svc-process.ts';

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';
const BUDGET = 10; // VALIDATE_RATE_PER_MINUTE's default
const CEILING = 120; // VALIDATE_GLOBAL_PER_MINUTE's default

/** One POST /discovery/validate with an empty JSON object, from `from`, with extra headers. */
function validate(port: number, from: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/discovery/validate',
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}

async function spend(port: number, from: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push(await validate(port, from, headers));
  return statuses;
}

const answered = (statuses: number[]) => statuses.filter((s) => s === 400).length;
const refused = (statuses: number[]) => statuses.filter((s) => s === 429).length;

interface Front {
  svc: TestServer;
  /** nginx's port. */
  port: number;
  close(): Promise<void>;
}

/** svc with `env` (TRUSTED_PROXIES naming nginx) behind an nginx configured as docs/OPERATIONS.md shows. */
async function behindNginx(env: Record<string, string>): Promise<Front> {
  const svc = await startTestServer({ config: testConfig({ TRUSTED_PROXIES: '127.0.0.1/32', ...env }) });
  const dir = mkdtempSync(join(tmpdir(), 'svc-nginx-'));
  const port = await freePort();
  // The example of docs/OPERATIONS.md, with the paths of a throwaway prefix.
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream svc { server 127.0.0.1:${svc.port}; keepalive 16; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://svc;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`,
  );
  const nginx: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  const health = () =>
    new Promise<number>((resolve) =>
      http
        .get({ host: '127.0.0.1', port, path: '/health', agent: false }, (r) => (r.resume(), resolve(r.statusCode ?? 0)))
        .on('error', () => resolve(0)),
    );
  const deadline = Date.now() + 20_000;
  while ((await health()) !== 200) {
    if (Date.now() > deadline || nginx.exitCode !== null)
      throw new Error(`nginx did not answer: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    svc,
    port,
    async close() {
      if (nginx.exitCode === null) {
        const exited = new Promise((r) => nginx.once('exit', r));
        nginx.kill('SIGTERM');
        await exited;
      }
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

beforeAll(() => {
  ensureDebianTool(NGINX, 'nginx');
}, 600_000);

describe('svc behind nginx with TRUSTED_PROXIES: per-client budgets', () => {
  let front: Front;
  beforeAll(async () => {
    // A ceiling out of the way: these tests count the per-client budgets alone.
    front = await behindNginx({ VALIDATE_GLOBAL_PER_MINUTE: '100000' });
  });
  afterAll(() => front?.close());

  it('two clients behind nginx get a budget each', async () => {
    const first = await spend(front.port, '127.0.0.2', BUDGET + 2);
    const second = await spend(front.port, '127.0.0.3', BUDGET + 2);
    expect([answered(first), refused(first)]).toEqual([BUDGET, 2]);
    expect([answered(second), refused(second)]).toEqual([BUDGET, 2]);
  });

  it('an X-Forwarded-For from a peer that is not a trusted proxy changes nothing', async () => {
    // Straight to svc from an untrusted address, naming a new client each time: one budget.
    const direct = [];
    for (let i = 0; i < BUDGET + 2; i++)
      direct.push(await validate(front.svc.port, '127.0.0.4', { 'X-Forwarded-For': `203.0.113.${i + 1}` }));
    expect([answered(direct), refused(direct)]).toEqual([BUDGET, 2]);
    // Through nginx, a client forging the chain (another client, or the proxy itself) is still the
    // address nginx saw: its forged entries are left of the one nginx appends.
    const forged = [];
    for (let i = 0; i < BUDGET + 2; i++)
      forged.push(await validate(front.port, '127.0.0.5', { 'X-Forwarded-For': i % 2 ? `198.51.100.${i}` : '127.0.0.1' }));
    expect([answered(forged), refused(forged)]).toEqual([BUDGET, 2]);
  });
});

describe('svc behind nginx with TRUSTED_PROXIES: the global ceiling', () => {
  let front: Front;
  beforeAll(async () => {
    front = await behindNginx({});
  });
  afterAll(() => front?.close());

  it(`after ${CEILING / BUDGET} clients spend their validate budget (${CEILING}, the global ceiling), a ${CEILING / BUDGET + 1}th is answered`, async () => {
    const spenders = Array.from({ length: CEILING / BUDGET }, (_, i) => `127.0.1.${i + 1}`);
    const spent = await Promise.all(spenders.map((from) => spend(front.port, from, BUDGET)));
    expect(spent.map(answered)).toEqual(spenders.map(() => BUDGET));
    expect(await validate(front.port, '127.0.1.200')).toBe(400);
    expect(await validate(front.port, '127.0.1.201')).toBe(400);
  });
});
