/**
 * The devnet as a server: fault switches (each observed over real HTTP), HTTPS with the
 * self-signed certificate (CN/SAN localhost and 127.0.0.1), the friendbot endpoint, and the
 * `npm run devnet` CLI (prints URLs and dev-only accounts; Ctrl-C exits cleanly).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import { Keypair, rpc } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { preparePayment, rawRpc, server } from './helpers.ts';

let devnet: Devnet;
let s: rpc.Server;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0, https: true });
  s = server(devnet);
});
afterAll(async () => devnet?.stop());

describe('fault switches', () => {
  it('rpcError for a number of calls, then normal again', async () => {
    devnet.faults.set('getHealth', { kind: 'rpcError', code: -32603, message: 'injected' }, { times: 1 });
    expect((await rawRpc(devnet.rpcUrl, 'getHealth')).error).toEqual({ code: -32603, message: 'injected' });
    expect((await rawRpc(devnet.rpcUrl, 'getHealth')).result.status).toBe('healthy');
  });

  it('timeout holds the connection until the client gives up; the server keeps serving', async () => {
    devnet.faults.set('getLatestLedger', { kind: 'timeout' }, { times: 1 });
    const started = Date.now();
    const err = await fetch(devnet.rpcUrl, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLatestLedger' }),
      signal: AbortSignal.timeout(300),
    }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect((await s.getLatestLedger()).sequence).toBe(devnet.latestLedger().sequence);
  });

  it('delay answers correctly after the delay; httpError answers a bare HTTP status', async () => {
    devnet.faults.set('getNetwork', { kind: 'delay', ms: 200 }, { times: 1 });
    const t = Date.now();
    expect((await s.getNetwork()).passphrase).toBe(devnet.networkPassphrase);
    expect(Date.now() - t).toBeGreaterThanOrEqual(190);
    devnet.faults.set('getFeeStats', { kind: 'httpError', status: 503 });
    const res = await fetch(devnet.rpcUrl, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getFeeStats' }) });
    expect(res.status).toBe(503);
    devnet.faults.clear();
    expect((await s.getFeeStats()).latestLedger).toBe(devnet.latestLedger().sequence);
  });

  it('sendStatus, dropSubmissions and lagLedger', async () => {
    const payer = await devnet.createAccount({ usdc: 100n });
    const payee = await devnet.createAccount();
    const sub = Keypair.fromSecret((await devnet.createAccount()).secret);
    const { tx } = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 5n,
      source: sub,
      payer: Keypair.fromSecret(payer.secret),
    });
    devnet.faults.sendStatus('TRY_AGAIN_LATER', { times: 1 });
    expect((await s.sendTransaction(tx)).status).toBe('TRY_AGAIN_LATER');
    devnet.faults.sendStatus('ERROR', { times: 1 });
    const e = await s.sendTransaction(tx);
    expect(e.status).toBe('ERROR');
    expect(e.errorResult?.result.type).toBe('txInternalError');
    devnet.faults.dropSubmissions({ times: 1 });
    const dropped = await s.sendTransaction(tx);
    expect(dropped.status).toBe('PENDING');
    await devnet.closeLedger();
    expect((await s.getTransaction(dropped.hash)).status).toBe('NOT_FOUND');
    expect(devnet.balances(payee.publicKey).usdc).toBe(0n);
    // The same transaction goes through once the faults are used up.
    expect((await s.sendTransaction(tx)).status).toBe('PENDING');
    await devnet.closeLedger();
    expect((await s.getTransaction(dropped.hash)).status).toBe('SUCCESS');

    await devnet.closeLedger();
    await devnet.closeLedger();
    devnet.faults.lagLedger(2);
    const real = devnet.latestLedger().sequence;
    expect((await s.getLatestLedger()).sequence).toBe(real - 2);
    expect((await s.getHealth()).latestLedger).toBe(real - 2);
    devnet.faults.clear();
    expect((await s.getLatestLedger()).sequence).toBe(real);
  });
});

describe('https and friendbot', () => {
  it('serves JSON-RPC over https with a certificate for localhost and 127.0.0.1', async () => {
    const cert = new X509Certificate(devnet.caCertPem!);
    expect(cert.subject).toContain('CN=localhost');
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    const port = Number(new URL(devnet.httpsRpcUrl!).port);
    const call = (host: string) =>
      new Promise<string>((resolve, reject) => {
        const req = https.request(
          { host, port, method: 'POST', path: '/', ca: devnet.caCertPem, headers: { 'content-type': 'application/json' } },
          (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve(body));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }));
      });
    expect(JSON.parse(await call('localhost')).result.status).toBe('healthy');
    expect(JSON.parse(await call('127.0.0.1')).result.status).toBe('healthy');
    // Untrusted by default: a plain client refuses the self-signed certificate.
    await expect(fetch(devnet.httpsRpcUrl!, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('a child process trusts the certificate through NODE_EXTRA_CA_CERTS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devnet-ca-'));
    const pem = join(dir, 'devnet.pem');
    writeFileSync(pem, devnet.caCertPem!);
    try {
      const script = `fetch(${JSON.stringify(devnet.httpsRpcUrl)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }) }).then((r) => r.json()).then((j) => console.log(j.result.status), (e) => { console.log('failed', e.cause?.code ?? e.message); process.exit(1); })`;
      const run = (env: NodeJS.ProcessEnv) =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          child.stdout.on('data', (c) => (out += c));
          child.on('exit', (code) => resolve({ code, out: out.trim() }));
        });
      expect(await run({ ...process.env, NODE_EXTRA_CA_CERTS: pem })).toEqual({ code: 0, out: 'healthy' });
      const untrusted = await run({ ...process.env, NODE_EXTRA_CA_CERTS: '' });
      expect(untrusted.code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('friendbot creates and funds an account (XLM, USDC trustline, optional USDC)', async () => {
    const kp = Keypair.random();
    const res = await fetch(`${devnet.friendbotUrl}?addr=${kp.publicKey()}&usdc=777`);
    expect(res.status).toBe(200);
    expect(devnet.balances(kp.publicKey())).toEqual({ xlm: 10_000n * 10_000_000n, usdc: 777n, custom: 0n });
    expect((await s.getAccount(kp.publicKey())).accountId()).toBe(kp.publicKey());
    const bad = await fetch(`${devnet.friendbotUrl}?addr=GNOPE`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('invalid account address');
    const badAmount = await fetch(`${devnet.friendbotUrl}?addr=${kp.publicKey()}&usdc=-5`);
    expect(badAmount.status).toBe(400);
    expect((await s.getNetwork()).friendbotUrl).toBe(devnet.friendbotUrl);
  });
});

describe('npm run devnet (CLI)', () => {
  it('prints the RPC URLs, network, USDC id and dev-only accounts, writes --ca-file; SIGINT exits 0', async () => {
    const caDir = mkdtempSync(join(tmpdir(), 'svc-devnet-ca-'));
    const caFile = join(caDir, 'devnet-ca.pem');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/devnet/cli.ts',
        '--port',
        '0',
        '--https-port',
        '0',
        '--accounts',
        '2',
        '--ledger-ms',
        '100',
        '--ca-file',
        caFile,
      ],
      {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const deadline = Date.now() + 30_000;
    while (!out.includes('Certificate written to') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    const url = /RPC \(http\):\s+(\S+)/.exec(out)?.[1];
    expect(url).toBeDefined();
    expect(out).toContain('CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA');
    expect(out).toContain('Test SDF Network ; September 2015');
    expect(out).toMatch(/RPC \(https\):\s+https:\/\/localhost:\d+/);
    expect(out.match(/secret S[A-Z2-7]{55}\s+\(dev-only\)/g)).toHaveLength(2);
    expect((await rawRpc(url!, 'getHealth')).result.status).toBe('healthy');
    // The file NODE_EXTRA_CA_CERTS names: the certificate printed, which the HTTPS RPC presents.
    expect(out).toContain(`NODE_EXTRA_CA_CERTS=${caFile}`);
    const pem = readFileSync(caFile, 'utf8');
    expect(out).toContain(pem.trim());
    const httpsUrl = /RPC \(https\):\s+(\S+)/.exec(out)![1]!;
    const health = await new Promise<string>((done, fail) => {
      const req = https.request(httpsUrl, { method: 'POST', ca: pem, headers: { 'content-type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c)).on('end', () => done(body));
      });
      req.on('error', fail).end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }));
    });
    expect(JSON.parse(health)).toMatchObject({ result: { status: 'healthy' } });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    rmSync(caDir, { recursive: true, force: true });
  });
});
