/**
 * startDevnet(): the embedded Stellar devnet (docs/DEVNET.md). One in-process ledger, served as
 * Soroban JSON-RPC over HTTP (and HTTPS with a generated self-signed certificate), with a
 * friendbot endpoint, a ledger-close timer and a programmatic control handle.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { Keypair } from '@stellar/stellar-sdk';
import { generate } from 'selfsigned';
import { Faults } from './faults.ts';
import { DevnetLedger, HISTORY_LEDGERS } from './ledger.ts';
import { NETWORK_TTLS, type LedgerLimits } from './fees.ts';
import { makeRequestListener, type RpcContext } from './rpc.ts';
import { DEVNET_NETWORKS, type DevAccount, type Devnet, type FundOptions, type LedgerInfo, type StartDevnetOptions } from './types.ts';

export type * from './types.ts';
export { DEVNET_NETWORKS } from './types.ts';
export { DevnetLedger, USDC_ISSUER } from './ledger.ts';
export { FEE_SETTINGS, BASE_FEE, NETWORK_TTLS, LEDGER_LIMITS, type LedgerLimits } from './fees.ts';

/** Extra control beyond the fixed public API (additive; tests for multisig etc.). */
export interface DevnetExtras {
  /** The in-process ledger (state, pending queue, records). */
  ledger: DevnetLedger;
  /** Set an account's thresholds [master, low, med, high] and extra ed25519 signers. */
  setSigners(publicKey: string, thresholds: [number, number, number, number], signers: Array<{ publicKey: string; weight: number }>): void;
  /**
   * Time travel for TTLs: close one ledger `ledgers` after the latest (the ones between pass
   * empty and are not kept; close times follow the clock). Entries whose TTL ends meanwhile are
   * archived (persistent) or gone (temporary).
   */
  advanceLedgers(ledgers: number): Promise<LedgerInfo>;
  /** Wait until the ledger reaches `sequence` (closing it on demand when no timer runs). */
  waitForLedger(sequence: number, timeoutMs?: number): Promise<LedgerInfo>;
}

export interface StartDevnetExtraOptions extends StartDevnetOptions {
  /** Injectable randomness: 32 bytes per call, used for nonces and account keys. Default crypto.getRandomValues. */
  random?: () => Uint8Array;
  /** Injectable clock (ms since epoch) for ledger close times and time bounds. Default Date.now. */
  now?: () => number;
  /** Ledgers of history kept for getLedgers / getTransaction. Default 17,280. */
  retentionLedgers?: number;
  /** Transactions kept in that history, oldest ledgers dropped first. Default 10,000. */
  retentionTransactions?: number;
  /** Narrower ledger-wide limits than the network's (LEDGER_LIMITS), e.g. `{ transactions: 2 }`: fuller ledgers surge sooner. */
  ledgerLimits?: Partial<LedgerLimits>;
  /** Minimum live time of a temporary entry (an authorization nonce), in ledgers. Default the played network's (NETWORK_TTLS). */
  minTempTtl?: number;
}

const info = (l: { sequence: number; closeTime: number }): LedgerInfo => ({ sequence: l.sequence, closeTime: l.closeTime });

async function makeCertificate(): Promise<{ key: string; cert: string }> {
  // Each devnet's certificate has a subject of its own: a client trusting two devnets (one per
  // network) finds each one's issuer by subject, and two certificates named alike would clash.
  const subject = [
    { name: 'commonName', value: 'localhost' },
    { name: 'organizationName', value: `svc devnet ${randomUUID()}` },
  ];
  const pems = await generate(subject, {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 60_000),
    notAfterDate: new Date(Date.now() + 365 * 24 * 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

function listen(server: http.Server | https.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function close(server: http.Server | https.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

export async function startDevnet(opts: StartDevnetExtraOptions = {}): Promise<Devnet & DevnetExtras> {
  const host = opts.host ?? '127.0.0.1';
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new Error(`devnet binds to loopback only, got host ${host}`);
  const ledgerMs = opts.ledgerMs ?? 5000;
  if (!Number.isFinite(ledgerMs) || ledgerMs < 0) throw new Error(`ledgerMs must be >= 0, got ${ledgerMs}`);

  const network = opts.network ?? 'stellar:testnet';
  const played = DEVNET_NETWORKS[network];
  if (!played) throw new Error(`devnet plays stellar:testnet or stellar:pubnet, got ${String(network)}`);
  const ledger = new DevnetLedger({
    networkPassphrase: played.passphrase,
    usdcIssuer: played.usdcIssuer,
    random: opts.random,
    now: opts.now,
    retentionLedgers: opts.retentionLedgers,
    retentionTransactions: opts.retentionTransactions,
    ttls: NETWORK_TTLS[network],
    ledgerLimits: opts.ledgerLimits,
    minTempTtl: opts.minTempTtl,
    ...(ledgerMs > 0 ? { history: { ledgers: HISTORY_LEDGERS, cadenceMs: ledgerMs } } : {}),
  });
  const faults = new Faults();
  const held = new Set<ServerResponse>();
  let friendbotUrl = '';
  const ctx: RpcContext = { ledger, faults, friendbotUrl: () => friendbotUrl, held };
  const fundVia = (addr: string, usdc: bigint | undefined) => Promise.resolve(ledger.fund(addr, { usdc }));
  const listener = makeRequestListener(ctx, fundVia);

  const httpServer = http.createServer((req, res) => void listener(req, res));
  const port = await listen(httpServer, opts.port ?? 0, host);
  const urlHost = host === '::1' ? '[::1]' : host;
  const rpcUrl = `http://${urlHost}:${port}`;
  friendbotUrl = `${rpcUrl}/friendbot`;

  let httpsServer: https.Server | undefined;
  let httpsRpcUrl: string | undefined;
  let caCertPem: string | undefined;
  if (opts.https) {
    const { key, cert } = await makeCertificate();
    caCertPem = cert;
    httpsServer = https.createServer({ key, cert }, (req, res) => void listener(req, res));
    const sport = await listen(httpsServer, opts.httpsPort ?? 0, host);
    httpsRpcUrl = `https://localhost:${sport}`;
  }

  const waiters = new Set<() => void>();
  const closeLedger = (skip = 0): LedgerInfo => {
    const l = ledger.closeLedger(skip);
    for (const w of waiters) w();
    return info(l);
  };
  let timer: NodeJS.Timeout | undefined;
  if (ledgerMs > 0) {
    timer = setInterval(() => {
      try {
        closeLedger();
      } catch (e) {
        // A close must never take the devnet down; report and keep going.
        console.error('devnet: ledger close failed:', e instanceof Error ? e.message : e);
      }
    }, ledgerMs);
  }

  const createAccount = (fo: FundOptions = {}): Promise<DevAccount> => {
    const kp = opts.random ? Keypair.fromRawEd25519Seed(Buffer.from(opts.random().subarray(0, 32))) : Keypair.random();
    ledger.fund(kp.publicKey(), fo);
    return Promise.resolve({ publicKey: kp.publicKey(), secret: kp.secret() });
  };

  const demoAccounts: DevAccount[] = [];
  for (let i = 0; i < (opts.demoAccounts ?? 0); i++) demoAccounts.push(await createAccount({ usdc: 1_000n * 10_000_000n }));

  let stopped = false;
  const devnet: Devnet & DevnetExtras = {
    rpcUrl,
    httpsRpcUrl,
    caCertPem,
    friendbotUrl,
    networkPassphrase: ledger.networkPassphrase,
    network,
    usdc: { contractId: ledger.usdc.contractId, code: 'USDC', issuer: played.usdcIssuer, decimals: 7 },
    customToken: { contractId: ledger.custom.contractId, decimals: 7 },
    demoAccounts,
    ledger,
    closeLedger: () => Promise.resolve(closeLedger()),
    advanceLedgers: (ledgers) => {
      if (!Number.isInteger(ledgers) || ledgers < 1) return Promise.reject(new Error(`ledgers must be a positive integer, got ${ledgers}`));
      return Promise.resolve(closeLedger(ledgers - 1));
    },
    latestLedger: () => info(ledger.latest()),
    createAccount,
    fund: (publicKey, fo) => Promise.resolve(ledger.fund(publicKey, fo)),
    mintCustomToken: (address, amount) => Promise.resolve(ledger.mint(ledger.custom, address, amount)),
    balances: (address) => {
      const acct = address.startsWith('G') ? ledger.account(address) : null;
      return {
        xlm: acct?.balance ?? 0n,
        usdc: ledger.tokenBalance(ledger.usdc, address),
        custom: ledger.tokenBalance(ledger.custom, address) ?? 0n,
      };
    },
    setUsdcAuthorized: (publicKey, authorized) => ledger.setUsdcAuthorized(publicKey, authorized),
    setSigners: (publicKey, thresholds, signers) => ledger.setSigners(publicKey, thresholds, signers),
    waitForLedger: (sequence, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (ledger.latest().sequence >= sequence) {
            waiters.delete(check);
            clearTimeout(t);
            resolve(info(ledger.latest()));
            return true;
          }
          return false;
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`ledger ${sequence} not reached within ${timeoutMs} ms`));
        }, timeoutMs);
        if (check()) return;
        waiters.add(check);
        if (ledgerMs === 0) while (!check()) closeLedger();
      }),
    faults,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      if (timer) clearInterval(timer);
      for (const r of held) r.destroy();
      held.clear();
      await Promise.all([close(httpServer), httpsServer ? close(httpsServer) : Promise.resolve()]);
    },
  };
  return devnet;
}
