/**
 * Several networks in one process (README.md, Configuration; docs/OPERATIONS.md "Several
 * networks"): NETWORK as a list, each network's own suffixed variables before the unsuffixed ones,
 * and the schemes built from them (one kind per network, its signers under its own id).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { createSchemesFromConfig, signingKeys } from '../../src/chains/stellar/index.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { SettlementJournal } from '../../src/journal/journal.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';

const seed = () => Keypair.random().secret();
const publicOf = (secret: string) => Keypair.fromSecret(secret).publicKey();

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${Object.keys(env).join(',')}`);
}

describe('NETWORK with several networks', () => {
  it('a single NETWORK has one section, the config itself', () => {
    const secret = seed();
    const config = loadConfig({ SUBMITTER_SECRET: secret, RPC_URL_PUBNET: 'http://127.0.0.1:9/rpc' });
    expect(config.networks.map((n) => n.network)).toEqual(['stellar:testnet']);
    expect(config.networks[0]).toMatchObject({ network: config.network, rpcUrl: config.rpcUrl, submitters: config.submitters });
    // The list is no part of the config's own (projected, serialized) fields.
    expect(Object.keys(config)).not.toContain('networks');
    const schemes = createSchemesFromConfig(config, undefined, (rpc) => rpc);
    expect(schemes.map((s) => s.supported().signers)).toEqual([{ 'stellar:*': [publicOf(secret)] }]);
  });

  it('reads each network’s suffixed variables first and the unsuffixed ones otherwise', () => {
    const shared = seed();
    const pubnet = seed();
    const pubnetFeeBump = seed();
    const config = loadConfig({
      NETWORK: 'stellar:testnet, stellar:pubnet',
      SUBMITTER_SECRET: shared,
      SUBMITTER_SECRET_PUBNET: pubnet,
      FEE_BUMP_SECRET_PUBNET: pubnetFeeBump,
      RPC_URL: 'http://127.0.0.1:8000/',
      RPC_URL_PUBNET: 'http://127.0.0.1:8001/',
      MAX_TRANSACTION_FEE_STROOPS: '60000',
      MAX_TRANSACTION_FEE_STROOPS_PUBNET: '200000',
    });
    const [testnet, pub] = config.networks;
    expect(testnet).toMatchObject({
      network: 'stellar:testnet',
      rpcUrl: 'http://127.0.0.1:8000/',
      submitters: [publicOf(shared)],
      feeBumpAddress: null,
      maxTransactionFeeStroops: 60_000,
    });
    expect(pub).toMatchObject({
      network: 'stellar:pubnet',
      rpcUrl: 'http://127.0.0.1:8001/',
      submitters: [publicOf(pubnet)],
      feeBumpAddress: publicOf(pubnetFeeBump),
      maxTransactionFeeStroops: 200_000,
    });
    expect(signingKeys(pub!).feeBump?.publicKey()).toBe(publicOf(pubnetFeeBump));
    // The config's own fields are the first network's.
    expect(config).toMatchObject({ network: 'stellar:testnet', rpcUrl: 'http://127.0.0.1:8000/', maxTransactionFeeStroops: 60_000 });
    expect(JSON.stringify(config)).not.toMatch(/S[A-Z2-7]{55}/);

    const schemes = createSchemesFromConfig(config, undefined, (rpc) => rpc);
    expect(schemes.map((s) => s.supported())).toEqual([
      {
        kinds: [
          {
            x402Version: 2,
            scheme: 'exact',
            network: 'stellar:testnet',
            extra: { areFeesSponsored: true, maxTransactionFeeStroops: 60_000, inclusionFeeStroops: 100 },
          },
        ],
        signers: { 'stellar:testnet': [publicOf(shared)] },
      },
      {
        kinds: [
          {
            x402Version: 2,
            scheme: 'exact',
            network: 'stellar:pubnet',
            extra: { areFeesSponsored: true, maxTransactionFeeStroops: 200_000, inclusionFeeStroops: 100 },
          },
        ],
        signers: { 'stellar:pubnet': [publicOf(pubnet), publicOf(pubnetFeeBump)] },
      },
    ]);
  });

  it('one seed may serve both networks (two ledgers, two accounts of the same key)', () => {
    const shared = seed();
    const config = loadConfig({ NETWORK: 'stellar:pubnet,stellar:testnet', SUBMITTER_SECRET: shared, RPC_URL: 'http://127.0.0.1:8000/' });
    expect(config.network).toBe('stellar:pubnet');
    expect(config.networks.map((n) => [n.network, n.rpcUrl, n.submitters])).toEqual([
      ['stellar:pubnet', 'http://127.0.0.1:8000/', [publicOf(shared)]],
      ['stellar:testnet', 'http://127.0.0.1:8000/', [publicOf(shared)]],
    ]);
  });

  it('each network may set its own fee caps; the journal judges a payment by its network’s', async () => {
    const config = loadConfig({
      NETWORK: 'stellar:testnet,stellar:pubnet',
      SUBMITTER_SECRET: seed(),
      RPC_URL_PUBNET: 'http://127.0.0.1:8001/',
      FEE_BUDGET_DAILY_STROOPS: '5000000',
      FEE_BUDGET_DAILY_STROOPS_PUBNET: '100',
      FEE_BUDGET_PAYER_DAILY_STROOPS_TESTNET: 'off',
    });
    const { policy, networkPolicies } = config.settlement;
    expect([policy.dailyFeeCapStroops, policy.payerDailyFeeCapStroops]).toEqual([5_000_000n, 10_000_000n]);
    expect(networkPolicies.get('stellar:testnet')).toMatchObject({ dailyFeeCapStroops: 5_000_000n, payerDailyFeeCapStroops: null });
    expect(networkPolicies.get('stellar:pubnet')).toMatchObject({ dailyFeeCapStroops: 100n, payerDailyFeeCapStroops: 10_000_000n });

    const journal = new SettlementJournal({
      store: new SqliteJournalStore(join(mkdtempSync(join(tmpdir(), 'svc-networks-')), 'svc.sqlite')),
      policy,
      networkPolicies,
    });
    const payment = { payer: publicOf(seed()), payTo: publicOf(seed()), asset: 'C', amount: '1' };
    expect(await journal.verifyRefusal({ ...payment, network: 'stellar:pubnet' }, 200n)).toMatchObject({
      code: 'svc_fee_budget_daily_exhausted',
    });
    expect(await journal.verifyRefusal({ ...payment, network: 'stellar:testnet' }, 200n)).toBeNull();
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['NETWORK', { NETWORK: 'stellar:testnet,stellar:futurenet' }, /entry 2.*"stellar:futurenet"/],
    ['NETWORK', { NETWORK: 'stellar:testnet,stellar:testnet' }, /entry 2 repeats/],
    ['NETWORK', { NETWORK: 'stellar:testnet,' }, /entry 2/],
    ['RPC_URL_PUBNET', { NETWORK: 'stellar:testnet,stellar:pubnet' }, /\(or RPC_URL\) is required when NETWORK includes stellar:pubnet/],
    ['RPC_URL_PUBNET', { NETWORK: 'stellar:testnet,stellar:pubnet', RPC_URL_PUBNET: 'ftp://x' }, /http\(s\) URL/],
    [
      'SUBMITTER_SECRET_PUBNET',
      { NETWORK: 'stellar:testnet,stellar:pubnet', RPC_URL_PUBNET: 'http://127.0.0.1:1/', SUBMITTER_SECRET_PUBNET: 'hunter2' },
      /not a valid Stellar secret seed/,
    ],
    [
      'MAX_TRANSACTION_FEE_STROOPS_PUBNET',
      { NETWORK: 'stellar:testnet,stellar:pubnet', RPC_URL_PUBNET: 'http://127.0.0.1:1/', MAX_TRANSACTION_FEE_STROOPS_PUBNET: '0' },
      /integer from 1/,
    ],
    [
      'FEE_BUDGET_DAILY_STROOPS_PUBNET',
      { NETWORK: 'stellar:testnet,stellar:pubnet', RPC_URL_PUBNET: 'http://127.0.0.1:1/', FEE_BUDGET_DAILY_STROOPS_PUBNET: '-1' },
      /stroops or "off"/,
    ],
    [
      'CHANNEL_ACCOUNTS_TESTNET',
      {
        NETWORK: 'stellar:testnet,stellar:pubnet',
        RPC_URL_PUBNET: 'http://127.0.0.1:1/',
        CHANNEL_ACCOUNTS_TESTNET: '2',
        SUBMITTER_SECRET_TESTNET: `${seed()},${seed()}`,
      },
      /exactly one seed/,
    ],
  ])('%s: %j is refused', (variable, env, message) => {
    const err = configError({ SUBMITTER_SECRET: seed(), ...env });
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(message);
    expect(err.message).not.toMatch(/S[A-Z2-7]{55}/);
  });
});
