/**
 * An RPC fault is named as an RPC fault: reading an account's sequence through a
 * getLedgerEntries call that fails must say so, not "Account not found" (docs/SECURITY.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair } from '@stellar/stellar-sdk';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { AccountMissingError, RpcError, createSdkRpc } from '../../src/chains/stellar/rpc.ts';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0 });
});
afterAll(() => devnet?.stop());

describe('getAccountSequence', () => {
  it('names a getLedgerEntries fault as an RPC fault', async () => {
    const rpc = createSdkRpc({ url: devnet.rpcUrl, timeoutMs: 2_000 });
    const account = await devnet.createAccount({ usdcTrustline: false });
    devnet.faults.set('getLedgerEntries', { kind: 'rpcError', code: -32603, message: 'storage unavailable' }, { times: 1 });
    const err = await rpc.getAccountSequence(account.publicKey).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as Error).message).toMatch(/^RPC getLedgerEntries failed: .*storage unavailable/);
    expect((err as Error).message).not.toMatch(/not found/i);
    // The fault was consumed: the same call now reads the sequence.
    expect(typeof (await rpc.getAccountSequence(account.publicKey))).toBe('bigint');
  });

  it('an account that does not exist is AccountMissingError, not an RPC fault', async () => {
    const rpc = createSdkRpc({ url: devnet.rpcUrl, timeoutMs: 2_000 });
    const err = await rpc.getAccountSequence(Keypair.random().publicKey()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccountMissingError);
    expect(err).not.toBeInstanceOf(RpcError);
  });
});
