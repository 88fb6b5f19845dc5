/**
 * A long-running devnet stays bounded: past the retention window it forgets ledgers and
 * transaction records (getTransaction → NOT_FOUND, as stellar-rpc does), and authorization nonces
 * are deleted once past their live-until ledger (as the network deletes temporary entries), while
 * accounts and balances stay. Small windows make "days" a few dozen ledgers.
 */
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet, type DevnetExtras } from '../../src/devnet/index.ts';
import { preparePayment, server } from './helpers.ts';

const RETENTION = 10;
const MIN_TEMP_TTL = 15;
let devnet: Devnet & DevnetExtras;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0, retentionLedgers: RETENTION, minTempTtl: MIN_TEMP_TTL });
});
afterAll(async () => devnet?.stop());

/** Temporary contract-data entries (nonces) in a devnet's ledger state. */
const temporaryEntriesOf = (d: Devnet & DevnetExtras) =>
  [...d.ledger.state.entries.values()].filter((e) => e.key.type === 'contractData' && e.key.contractData.durability.name === 'temporary')
    .length;
const temporaryEntries = () => temporaryEntriesOf(devnet);

describe('devnet pruning', () => {
  it('forgets transaction records and expired nonces; the state stays bounded over many payments', async () => {
    const s = server(devnet);
    const payer = await devnet.createAccount({ usdc: 1_000_000n });
    const payee = await devnet.createAccount();
    const submitter = Keypair.fromSecret((await devnet.createAccount()).secret);
    const payment = async () => {
      const { tx } = await preparePayment(s, devnet.networkPassphrase, {
        contractId: devnet.usdc.contractId,
        from: payer.publicKey,
        to: payee.publicKey,
        amount: 1n,
        source: submitter,
        payer: Keypair.fromSecret(payer.secret),
      });
      const sent = await s.sendTransaction(tx);
      expect(sent.status).toBe('PENDING');
      await devnet.closeLedger();
      expect((await s.getTransaction(sent.hash)).status).toBe('SUCCESS');
      return sent.hash;
    };

    const first = await payment();
    expect(temporaryEntries()).toBe(1);
    const peaks: number[] = [];
    for (let i = 0; i < 12; i++) {
      await payment();
      // A few empty ledgers between payments: 12 payments span several prune sweeps and TTLs.
      for (let k = 0; k < 3; k++) await devnet.closeLedger();
      peaks.push(temporaryEntries());
    }
    // Every nonce lives at least MIN_TEMP_TTL ledgers; each payment here is 4 ledgers apart, so at
    // most ceil((MIN_TEMP_TTL + sweep interval) / 4) + 1 are alive at once, never all 13.
    expect(Math.max(...peaks)).toBeLessThanOrEqual(Math.ceil((MIN_TEMP_TTL + RETENTION) / 4) + 1);
    expect(devnet.ledger.ledgers.length).toBeLessThanOrEqual(RETENTION);
    // Transaction records older than the window are gone (at most the window's worth remain).
    expect((await s.getTransaction(first)).status).toBe('NOT_FOUND');
    expect(devnet.ledger.txs.size).toBeLessThanOrEqual(RETENTION * 2);
    // Accounts and balances are state, not history: kept.
    expect(devnet.balances(payee.publicKey).usdc).toBe(13n);
  });
});

describe('devnet pruning by transaction count', () => {
  it('keeps at most retentionTransactions transactions (the oldest ledgers first) and spent nonces, however many ledgers the window allows', async () => {
    const bounded = await startDevnet({ ledgerMs: 0, retentionTransactions: 3 });
    try {
      const s = server(bounded);
      const payer = await bounded.createAccount({ usdc: 1_000_000n });
      const payee = await bounded.createAccount();
      const submitter = Keypair.fromSecret((await bounded.createAccount()).secret);
      const hashes: string[] = [];
      for (let i = 0; i < 6; i++) {
        const { tx } = await preparePayment(s, bounded.networkPassphrase, {
          contractId: bounded.usdc.contractId,
          from: payer.publicKey,
          to: payee.publicKey,
          amount: 1n,
          source: submitter,
          payer: Keypair.fromSecret(payer.secret),
          expirationLedger: (await s.getLatestLedger()).sequence + 1,
        });
        const sent = await s.sendTransaction(tx);
        expect(sent.status).toBe('PENDING');
        await bounded.closeLedger();
        hashes.push(sent.hash);
      }
      expect(bounded.ledger.txs.size).toBeLessThanOrEqual(3);
      // Nonces past the count whose signatures expired are gone (each here expired a ledger after use).
      expect(temporaryEntriesOf(bounded)).toBeLessThanOrEqual(3);
      expect((await s.getTransaction(hashes[0]!)).status).toBe('NOT_FOUND');
      expect((await s.getTransaction(hashes[2]!)).status).toBe('NOT_FOUND');
      expect((await s.getTransaction(hashes[5]!)).status).toBe('SUCCESS');
      // History starts after the dropped ledgers; the latest ledger always stays.
      const health = await s.getHealth();
      expect(health.oldestLedger).toBeGreaterThan(1000);
      expect(bounded.ledger.ledgers.at(-1)!.sequence).toBe(health.latestLedger);
      expect(bounded.balances(payee.publicKey).usdc).toBe(6n);
    } finally {
      await bounded.stop();
    }
  });
});
