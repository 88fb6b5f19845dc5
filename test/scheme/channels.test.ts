/**
 * Channel accounts (docs/OPERATIONS.md "Channel accounts"): from one funded SUBMITTER_SECRET, svc
 * derives CHANNEL_ACCOUNTS source accounts, creates the missing ones on the devnet the first time
 * it needs them (one createAccount transaction), settles from them with the funder paying every
 * fee through a fee bump, and finds the same channels again after a restart. Two instances with one
 * funder creating channels at once both end up with theirs.
 */
import { Account, Keypair, Operation, TransactionBuilder } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNEL_STARTING_BALANCE_XLM, ChannelOpener, deriveChannelKeys } from '../../src/chains/stellar/channels.ts';
import { AccountMissingError } from '../../src/chains/stellar/rpc.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { SchemeHarness } from './harness.ts';

const CHANNELS = 4;
let h: SchemeHarness;
let funder: Keypair;

beforeAll(async () => {
  h = await SchemeHarness.start(200);
  funder = Keypair.fromSecret((await h.devnet.createAccount({ usdcTrustline: false })).secret);
}, 60_000);
afterAll(() => h?.stop());

describe('configuration', () => {
  it('derives the same channels from the same seed, makes the funder the fee payer, and never serializes a seed', () => {
    const env = { SUBMITTER_SECRET: funder.secret(), CHANNEL_ACCOUNTS: String(CHANNELS), DB_PATH: ':memory:' };
    const a = loadConfig(env);
    const b = loadConfig(env);
    expect(a.submitters).toHaveLength(CHANNELS);
    expect(a.submitters).toEqual(b.submitters);
    expect(new Set(a.submitters).size).toBe(CHANNELS);
    expect(a.submitters).not.toContain(funder.publicKey());
    expect(a.feeBumpAddress).toBe(funder.publicKey());
    expect(a.channelFunder).toBe(funder.publicKey());
    const text = JSON.stringify(a);
    for (const k of [funder, ...deriveChannelKeys(funder, CHANNELS)]) expect(text).not.toContain(k.secret());
  });

  it('refuses channels over a list of seeds, and a count outside 0..100', () => {
    const two = `${Keypair.random().secret()},${Keypair.random().secret()}`;
    expect(() => loadConfig({ SUBMITTER_SECRET: two, CHANNEL_ACCOUNTS: '2' })).toThrow(ConfigError);
    expect(() => loadConfig({ SUBMITTER_SECRET: funder.secret(), CHANNEL_ACCOUNTS: '101' })).toThrow(/CHANNEL_ACCOUNTS/);
  });
});

describe('the devnet applies createAccount', () => {
  it('all or nothing: an existing destination fails the whole transaction, creates nothing, charges the fee', async () => {
    const fresh = Keypair.random().publicKey();
    const existing = (await h.devnet.createAccount({})).publicKey;
    const before = h.devnet.balances(funder.publicKey()).xlm;
    const seq = await h.rpc.getAccountSequence(funder.publicKey());
    const tx = new TransactionBuilder(new Account(funder.publicKey(), seq.toString()), {
      fee: '200',
      networkPassphrase: h.devnet.networkPassphrase,
    })
      .addOperation(Operation.createAccount({ destination: fresh, startingBalance: '3' }))
      .addOperation(Operation.createAccount({ destination: existing, startingBalance: '3' }))
      .setTimeout(30)
      .build();
    tx.sign(funder);
    const sent = await h.rpc.send(tx);
    expect(sent.status).toBe('PENDING');
    let status = await h.rpc.getTransaction(sent.hash);
    while (status.status === 'NOT_FOUND') status = await new Promise((r) => setTimeout(r, 100)).then(() => h.rpc.getTransaction(sent.hash));
    expect(status.status).toBe('FAILED');
    await expect(h.rpc.getAccountSequence(fresh)).rejects.toThrow(AccountMissingError);
    expect(h.devnet.balances(funder.publicKey()).xlm).toBe(before - 200n);
    expect(await h.rpc.getAccountSequence(funder.publicKey())).toBe(seq + 1n);
  });
});

describe('settling from channel accounts', () => {
  it('creates the channels on first use, settles a burst from them with the funder paying the fees, and reuses them after a restart', async () => {
    const config = testConfig({ SUBMITTER_SECRET: funder.secret(), CHANNEL_ACCOUNTS: String(CHANNELS), RPC_URL: h.devnet.rpcUrl });
    for (const channel of config.submitters) await expect(h.rpc.getAccountSequence(channel)).rejects.toThrow(AccountMissingError);
    const { buyer, seller } = await h.parties(100_000_000n);
    const settleBurst = async (serverUrl: string, n: number) => {
      const payments = await Promise.all(
        Array.from({ length: n }, async () => {
          const requirements = h.requirements(seller.publicKey());
          return { requirements, payload: await h.pay(requirements, buyer) };
        }),
      );
      return Promise.all(
        payments.map(({ requirements, payload }) =>
          api(serverUrl).post('/settle', { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
        ),
      );
    };

    const funderBefore = h.devnet.balances(funder.publicKey()).xlm;
    const first = await startTestServer({ config });
    const results = await settleBurst(first.url, 2 * CHANNELS);
    await first.close();
    expect(results.map((r) => r.body.success)).toEqual(Array(2 * CHANNELS).fill(true));
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(BigInt(2 * CHANNELS) * 100_000n);
    // Every channel exists with exactly its starting balance: the channels paid no fee.
    for (const channel of config.submitters)
      expect(h.devnet.balances(channel).xlm).toBe(BigInt(CHANNEL_STARTING_BALANCE_XLM) * 10_000_000n);
    const spent = funderBefore - h.devnet.balances(funder.publicKey()).xlm;
    expect(spent).toBeGreaterThan(BigInt(CHANNELS) * BigInt(CHANNEL_STARTING_BALANCE_XLM) * 10_000_000n); // the channels' funding + every fee

    // A second start with the same seed finds the channels and settles without creating any.
    const second = await startTestServer({
      config: testConfig({ SUBMITTER_SECRET: funder.secret(), CHANNEL_ACCOUNTS: String(CHANNELS), RPC_URL: h.devnet.rpcUrl }),
    });
    const funderMid = h.devnet.balances(funder.publicKey()).xlm;
    const again = await settleBurst(second.url, CHANNELS);
    await second.close();
    expect(again.map((r) => r.body.success)).toEqual(Array(CHANNELS).fill(true));
    expect(funderMid - h.devnet.balances(funder.publicKey()).xlm).toBeLessThan(10_000_000n); // fees only, no new channel
    for (const channel of config.submitters)
      expect(h.devnet.balances(channel).xlm).toBe(BigInt(CHANNEL_STARTING_BALANCE_XLM) * 10_000_000n);
  }, 120_000);
});

describe('instances sharing one funder', () => {
  it('two instances creating channels at the same moment both get them: the loser of the funder sequence looks again and creates only what is missing', async () => {
    const shared = Keypair.fromSecret((await h.devnet.createAccount({ usdcTrustline: false })).secret);
    // One instance still configured with 4 channels, the other already with 6.
    const channels = deriveChannelKeys(shared, 6).map((k) => k.publicKey());
    const opener = (count: number) =>
      new ChannelOpener({ rpc: h.rpc, funder: shared, passphrase: h.devnet.networkPassphrase, channels: channels.slice(0, count) });
    const [one, two] = [opener(4), opener(6)];
    const sequences = await Promise.all([one.sequenceOf(channels[0]!), two.sequenceOf(channels[5]!), two.sequenceOf(channels[1]!)]);
    for (const sequence of sequences) expect(typeof sequence).toBe('bigint');
    for (const channel of channels) expect(h.devnet.balances(channel).xlm).toBe(BigInt(CHANNEL_STARTING_BALANCE_XLM) * 10_000_000n);
  }, 60_000);

  it('a funder sequence taken by a transaction that landed (ERROR txBadSeq) is contention: the opener looks again and creates the channels', async () => {
    const shared = Keypair.fromSecret((await h.devnet.createAccount({ usdcTrustline: false })).secret);
    const channels = deriveChannelKeys(shared, 2).map((k) => k.publicKey());
    // At the RPC port: before the opener's first transaction is sent, another transaction of the
    // funder's lands, so the opener's (built on the sequence it read) is refused with txBadSeq.
    let raced = false;
    const rpc: typeof h.rpc = Object.create(h.rpc) as typeof h.rpc;
    rpc.send = async (tx) => {
      if (!raced) {
        raced = true;
        const seq = await h.rpc.getAccountSequence(shared.publicKey());
        const other = new TransactionBuilder(new Account(shared.publicKey(), seq.toString()), {
          fee: '100',
          networkPassphrase: h.devnet.networkPassphrase,
        })
          .addOperation(Operation.createAccount({ destination: Keypair.random().publicKey(), startingBalance: '3' }))
          .setTimeout(30)
          .build();
        other.sign(shared);
        expect((await h.rpc.send(other)).status).toBe('PENDING');
        while ((await h.rpc.getAccountSequence(shared.publicKey())) === seq) await new Promise((r) => setTimeout(r, 50));
        const refused = await h.rpc.send(tx);
        expect(refused).toMatchObject({ status: 'ERROR', resultCode: 'txBadSeq' });
        return refused;
      }
      return h.rpc.send(tx);
    };
    const opener = new ChannelOpener({ rpc, funder: shared, passphrase: h.devnet.networkPassphrase, channels, sleep: async () => {} });
    expect(typeof (await opener.sequenceOf(channels[0]!))).toBe('bigint');
    expect(raced).toBe(true);
    for (const channel of channels) expect(h.devnet.balances(channel).xlm).toBe(BigInt(CHANNEL_STARTING_BALANCE_XLM) * 10_000_000n);
  }, 60_000);
});
