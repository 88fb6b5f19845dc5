/**
 * A devnet + an in-process svc whose /settle goes through a real SQLite journal file, for the
 * journal tests. Everything is real except the clock of the reconciler (the tests call
 * `reconcile()` where a timer would).
 */
import { mkdtempSync } from 'node:fs';
import { expect } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signingKeys } from '../../src/config.ts';
import { ExactStellarScheme, type ExactStellarSchemeOptions } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { SettlementJournal } from '../../src/journal/journal.ts';
import { DEFAULT_POLICY, type PaymentPolicy } from '../../src/journal/policy.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import type { JournalStore } from '../../src/journal/types.ts';
import type { Fault } from '../../src/devnet/types.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import type { SchemeHarness } from '../scheme/harness.ts';

export function tempDbPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'svc.sqlite');
}

export interface JournaledFacilitator {
  url: string;
  scheme: ExactStellarScheme;
  journal: SettlementJournal;
  submitter: string;
  /** The submitter's seed, to prove it never reaches the journal file. */
  submitterSecret: string;
  dbPath: string;
  landed: unknown[];
  settle(paymentPayload: unknown, paymentRequirements: unknown, idempotencyKey?: string): Promise<{ status: number; body: any }>;
  verify(paymentPayload: unknown, paymentRequirements: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function journaledFacilitator(
  h: SchemeHarness,
  options: {
    dbPath?: string;
    /** Another store (e.g. Postgres); default: SQLite at dbPath. */
    store?: JournalStore;
    submitterSecret?: string;
    policy?: Partial<PaymentPolicy>;
    scheme?: Partial<ExactStellarSchemeOptions>;
    /** The journal's clock (its budget day and failure window); default the system clock. */
    now?: () => number;
    /** How long the retry owed a `settlement_pending` outcome waits for it (journal option; default 0). */
    pendingRetryWaitMs?: number;
  } = {},
): Promise<JournaledFacilitator> {
  const secret = options.submitterSecret ?? (await h.devnet.createAccount({ usdcTrustline: false })).secret;
  const config = testConfig({ SUBMITTER_SECRET: secret, RPC_URL: h.devnet.rpcUrl });
  const keys = signingKeys(config);
  const scheme = new ExactStellarScheme({
    network: config.network,
    rpc: createSdkRpc({ url: h.devnet.rpcUrl, timeoutMs: 2_000 }),
    submitters: keys.submitters,
    feeBump: null,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
    ...options.scheme,
  });
  const landed: unknown[] = [];
  const dbPath = options.dbPath ?? tempDbPath();
  const journal = new SettlementJournal({
    store: options.store ?? new SqliteJournalStore(dbPath),
    policy: { ...DEFAULT_POLICY, ...options.policy },
    ...(options.now ? { now: options.now } : {}),
    ...(options.pendingRetryWaitMs ? { pendingRetryWaitMs: options.pendingRetryWaitMs } : {}),
    onLanded: ({ paymentPayload }) => landed.push(paymentPayload),
  });
  const server = await startTestServer({ config, scheme, journal });
  const client = api(server.url);
  return {
    url: server.url,
    scheme,
    journal,
    submitter: config.submitters[0]!,
    submitterSecret: secret,
    dbPath,
    landed,
    settle: (paymentPayload, paymentRequirements, idempotencyKey) =>
      client.post(
        '/settle',
        { x402Version: 2, paymentPayload, paymentRequirements },
        idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : undefined,
      ),
    verify: (paymentPayload, paymentRequirements) => client.post('/verify', { x402Version: 2, paymentPayload, paymentRequirements }),
    close: async () => {
      await server.close();
      await journal.store.close();
    },
  };
}

/**
 * Settles while the devnet's getTransaction answers `fault` (the RPC cannot confirm the outcome):
 * the answer is `settlement_pending` with the broadcast transaction's hash. The fault is cleared
 * before this returns.
 */
export async function settleUnconfirmed(
  h: SchemeHarness,
  f: Pick<JournaledFacilitator, 'settle'>,
  payment: { payload: unknown; req: unknown },
  options: { fault?: Fault; idempotencyKey?: string } = {},
): Promise<{ status: number; body: any }> {
  h.devnet.faults.set('getTransaction', options.fault ?? { kind: 'rpcError' });
  let res;
  try {
    res = await f.settle(payment.payload, payment.req, options.idempotencyKey);
  } finally {
    h.devnet.faults.clear();
  }
  expect(res.body).toMatchObject({
    success: false,
    errorReason: 'settlement_pending',
    transaction: expect.stringMatching(/^[0-9a-f]{64}$/),
  });
  return res;
}
