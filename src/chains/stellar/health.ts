/**
 * Readiness checks for the Stellar chain: the RPC serves the configured network (its getNetwork
 * passphrase) and answers with a recent latest ledger, and every
 * account that pays for settlements (submitters, channels, fee-bump) holds at least the configured
 * native balance. Addresses are public; no seed is read here.
 */
import { Keypair, xdr, type rpc as sdkRpc } from '@stellar/stellar-sdk';
import type { CheckResult } from '../../ops/readiness.ts';
import { signerAddresses, type StellarConfig } from './config.ts';
import { STELLAR_NETWORKS, type StellarNetwork } from './networks.ts';
import { createSdkRpc, describeError, sdkServer, type ChainRpc } from './rpc.ts';

const STROOPS_PER_XLM = 10_000_000n;

export function rpcRecentCheck(chain: Pick<ChainRpc, 'getLatestLedger'>, maxAgeSeconds: number, now: () => number = Date.now) {
  return async (): Promise<CheckResult> => {
    const latest = await chain.getLatestLedger();
    const age = Math.max(0, Math.round(now() / 1000 - latest.closeTime));
    return age <= maxAgeSeconds
      ? { ok: true, detail: `latest ledger ${latest.sequence} closed ${age} s ago` }
      : { ok: false, detail: `latest ledger ${latest.sequence} closed ${age} s ago (more than ${maxAgeSeconds} s)` };
  };
}

/**
 * Why the RPC at `rpcUrl` does not serve `network`, or null when it does: its getNetwork passphrase
 * is another network's (named when svc knows it). A fault of the RPC itself is thrown (RpcError
 * text), for the caller to tell "unreachable" from "wrong network". The message names no URL (an
 * RPC URL may carry an API key).
 */
export function networkMismatch(rpcUrl: string, network: StellarNetwork, timeoutMs = 1_500): () => Promise<string | null> {
  let server: sdkRpc.Server | undefined;
  return async () => {
    server ??= sdkServer(rpcUrl, timeoutMs);
    let passphrase: string;
    try {
      ({ passphrase } = await server.getNetwork());
    } catch (err) {
      throw new Error(`RPC getNetwork failed: ${describeError(err)}`, { cause: err });
    }
    if (passphrase === STELLAR_NETWORKS[network].passphrase) return null;
    const served = Object.entries(STELLAR_NETWORKS).find(([, n]) => n.passphrase === passphrase)?.[0];
    return `serves ${served ?? 'another network'} (passphrase ${JSON.stringify(String(passphrase).slice(0, 100))}), not ${network}`;
  };
}

/** The RPC serves `network` and its latest ledger is recent: the `rpc` readiness check. */
export function rpcCheck(mismatch: () => Promise<string | null>, recent: () => Promise<CheckResult>) {
  return async (): Promise<CheckResult> => {
    const [wrong, latest] = await Promise.all([mismatch(), recent()]);
    return wrong ? { ok: false, detail: `RPC ${wrong}` } : latest;
  };
}

type Field<T> = T | (() => T);
const read = <T>(field: Field<T>): T => (typeof field === 'function' ? (field as () => T)() : field);

/** The native balance of an account ledger entry (an accessor or a plain field, depending on the XDR build). */
function balanceOf(data: unknown): bigint {
  const account = read((data as { account: Field<{ balance: Field<unknown> }> }).account);
  return BigInt(String(read(account.balance)));
}

const xlm = (stroops: bigint) => `${stroops / STROOPS_PER_XLM}.${(stroops % STROOPS_PER_XLM).toString().padStart(7, '0')} XLM`;

/**
 * The native balances of `addresses`, in stroops (null: the account does not exist), read with
 * getLedgerEntries in one call: what /metrics' balance gauge shows (src/ops/state-gauges.ts).
 */
export function accountBalances(rpcUrl: string, timeoutMs = 2_000): (addresses: string[]) => Promise<(bigint | null)[]> {
  let server: sdkRpc.Server | undefined;
  return async (addresses) => {
    server ??= sdkServer(rpcUrl, timeoutMs);
    const keys = addresses.map((a) =>
      xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(a).xdrAccountId() })),
    );
    if (keys.length === 0) return [];
    const { entries } = await server.getLedgerEntries(...keys);
    const byKey = new Map(entries.map((e) => [e.key.toXDR('base64'), balanceOf(e.val)]));
    return keys.map((k) => byKey.get(k.toXDR('base64')) ?? null);
  };
}

/** Every address holds at least `minStroops`; the detail names the first short or missing one. */
export function balancesCheck(rpcUrl: string, addresses: () => string[], minStroops: bigint, timeoutMs = 2_000) {
  let server: sdkRpc.Server | undefined;
  return async (): Promise<CheckResult> => {
    server ??= sdkServer(rpcUrl, timeoutMs);
    const list = addresses();
    const balances = await Promise.all(
      list.map(async (address) => {
        // getLedgerEntries, not getAccountEntry: the latter reports a transport fault as "not found".
        const key = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(address).xdrAccountId() }));
        const { entries } = await server!.getLedgerEntries(key);
        const entry = entries[0];
        return entry ? balanceOf(entry.val) : -1n;
      }),
    );
    const short = balances.findIndex((b) => b < minStroops);
    if (short >= 0) {
      const b = balances[short]!;
      return { ok: false, detail: `${list[short]} ${b < 0n ? 'does not exist' : `holds ${xlm(b)}`} (minimum ${xlm(minStroops)})` };
    }
    return { ok: true, detail: `${list.length} account(s) at or above ${xlm(minStroops)}` };
  };
}

/** The Stellar checks of GET /ready for a loaded configuration (short RPC timeouts: a probe must answer). */
export function stellarReadinessChecks(
  config: Pick<
    StellarConfig,
    'network' | 'rpcUrl' | 'submitters' | 'feeBumpAddress' | 'readyMinBalanceStroops' | 'readyMaxLedgerAgeSeconds'
  >,
  options: { wrapRpc?: (rpc: ChainRpc) => ChainRpc; payingAccounts?: () => string[] } = {},
) {
  const chain = (options.wrapRpc ?? ((r) => r))(createSdkRpc({ url: config.rpcUrl, timeoutMs: 1_500 }));
  const paying = options.payingAccounts ?? (() => signerAddresses(config));
  return {
    rpc: rpcCheck(networkMismatch(config.rpcUrl, config.network), rpcRecentCheck(chain, config.readyMaxLedgerAgeSeconds)),
    balances: balancesCheck(config.rpcUrl, paying, BigInt(config.readyMinBalanceStroops), 1_500),
  };
}
