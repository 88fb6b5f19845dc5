/**
 * The devnet ledger (DevnetLedger): genesis, the submission queue, ledger closes and pruning
 * (`prune`), and the devnet's own controls over accounts and balances (fund, mint, setSigners).
 * Each stage of a transaction's life has its own file: validate.ts (stellar-core-like checks on
 * submit and at close), apply.ts and classic.ts (applied at close: fees, sequence, footprint
 * enforcement, results and meta) and simulate.ts (side-effect free simulation). They see the
 * ledger only through what they name of it (ApplyContext, SimulateContext, the LedgerState), so
 * none of them imports this file. Account entries are in accounts.ts, the history records and a
 * closed ledger's XDR in records.ts.
 */
import { Asset, Networks, StrKey, hash, xdr } from '@stellar/stellar-sdk';
import { putAccount, readAccount, replaceAccount } from './accounts.ts';
import { applyTransaction, recordInternalError } from './apply.ts';
import { applyCreateAccounts, isCreateAccountTransaction } from './classic.ts';
import { applyRestore, isRestoreTransaction } from './restore.ts';
import type { TokenModel } from './balances.ts';
import { Host, HostError, instanceKey } from './host.ts';
import { customTokenInstance, sacInstance } from './token-instances.ts';
import { RpcParamError, parseTransaction, type ParsedTx } from './envelope.ts';
import { FEE_STATS_LEDGERS, selectForLedger, type PendingTx } from './surge.ts';
import { simulateTransaction, type SimulateOptions } from './simulate.ts';
import { ledgerRecord, type LedgerRecord, type TxRecord } from './records.ts';
import { LedgerState, StateView } from './state.ts';
import { validateTransaction } from './validate.ts';
import { LEDGER_LIMITS, NETWORK_TTLS, type LedgerLimits, type NetworkTtls } from './fees.ts';
import { accountIdOf, alphaNum4Asset, i128Value, networkIdOf, scAddress, trustlineKey } from './xdr.ts';

export { RpcParamError } from './envelope.ts';

export const USDC_ISSUER = 'GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5';
/** The longest an entry may live (ledgers), on every network. */
export const MAX_ENTRY_TTL = NETWORK_TTLS['stellar:testnet'].maxEntryTtl;
const I64_MAX = (1n << 63n) - 1n;
const GENESIS_LEDGER = 1000;
/** Default ledgers kept for getLedgers / getTransaction (testnet's RPC keeps about a day at 5 s). */
export const DEFAULT_RETENTION = 17_280;
/**
 * Default transactions kept in that history. The ledger window alone bounds memory by time, not
 * by rate: each applied transaction costs about 9 KB of records (envelope, result, meta, events,
 * and its share of the ledger's close meta), so a busy devnet would grow without limit within
 * the window. 10,000 keep the history under about 90 MB (docs/DEVNET.md).
 */
export const DEFAULT_RETENTION_TRANSACTIONS = 10_000;

export type SendStatus = 'PENDING' | 'DUPLICATE' | 'TRY_AGAIN_LATER' | 'ERROR';

export interface SendOutcome {
  status: SendStatus;
  hash: string;
  errorResult?: xdr.TransactionResult;
}

export interface LedgerOptions {
  networkPassphrase?: string;
  /** The USDC issuer (default testnet's, USDC_ISSUER): with it the USDC contract id of the played network. */
  usdcIssuer?: string;
  /** Ledgers of history kept (getLedgers, getTransaction); default 17,280. */
  retentionLedgers?: number;
  /** Transactions kept in that history (the oldest ledgers go first); default 10,000. */
  retentionTransactions?: number;
  /** Narrower ledger-wide limits than the network's (LEDGER_LIMITS), e.g. `{ transactions: 2 }` to fill ledgers in a test. */
  ledgerLimits?: Partial<LedgerLimits>;
  /** TTL settings of the played network (default testnet's, NETWORK_TTLS). */
  ttls?: NetworkTtls;
  /** Minimum live time of a temporary entry (nonce), in ledgers; default the network's. */
  minTempTtl?: number;
  random?: () => Uint8Array;
  now?: () => number;
  /**
   * Start with this many empty ledgers already closed behind genesis, one per `cadenceMs` up to now
   * (a chain that has been running, as testnet has), instead of one ledger closed now.
   */
  history?: { ledgers: number; cadenceMs: number };
}

/**
 * The ledgers startDevnet closes behind genesis: a svc (or a buyer) started against a new devnet
 * reads a full span of close times at once (src/chains/stellar/ledger-time.ts samples 120 ledgers
 * and trusts 30 or more), instead of the 5 s fallback for its first seconds.
 */
export const HISTORY_LEDGERS = 120;

export class DevnetLedger {
  readonly networkPassphrase: string;
  readonly networkId: Uint8Array;
  readonly state = new LedgerState();
  readonly host: Host;
  readonly tokens = new Map<string, TokenModel>();
  readonly usdc: TokenModel;
  readonly custom: TokenModel;
  readonly ledgers: LedgerRecord[] = [];
  readonly txs = new Map<string, TxRecord>();
  private pending: PendingTx[] = [];
  private readonly random: () => Uint8Array;
  private readonly now: () => number;
  readonly retention: number;
  readonly retentionTransactions: number;
  readonly ttls: NetworkTtls;
  /** What one ledger holds of Soroban work (LEDGER_LIMITS unless the options narrow it). */
  readonly limits: LedgerLimits;
  /** The inclusion fees charged to the Soroban transactions of the last FEE_STATS_LEDGERS ledgers (getFeeStats). */
  private readonly feeWindow: Array<{ sequence: number; charged: number[] }> = [];
  /** Applied transactions per kept ledger (parallel to `ledgers`) and their sum. */
  private readonly ledgerTxCounts: number[] = [];
  private keptTransactions = 0;

  constructor(opts: LedgerOptions = {}) {
    this.retention = Math.max(1, Math.floor(opts.retentionLedgers ?? DEFAULT_RETENTION));
    this.retentionTransactions = Math.max(1, Math.floor(opts.retentionTransactions ?? DEFAULT_RETENTION_TRANSACTIONS));
    this.networkPassphrase = opts.networkPassphrase ?? Networks.TESTNET;
    this.networkId = networkIdOf(this.networkPassphrase);
    this.random = opts.random ?? (() => crypto.getRandomValues(new Uint8Array(32)));
    this.now = opts.now ?? (() => Date.now());
    const issuer = opts.usdcIssuer ?? USDC_ISSUER;
    const usdcId = new Asset('USDC', issuer).contractId(this.networkPassphrase);
    this.usdc = { kind: 'sac', contractId: usdcId, assetName: `USDC:${issuer}`, issuer, assetCode: 'USDC' };
    const customId = StrKey.encodeContract(hash(new TextEncoder().encode(`svc devnet custom SEP-41 token|${this.networkPassphrase}`)));
    this.custom = { kind: 'custom', contractId: customId };
    this.tokens.set(usdcId, this.usdc);
    this.tokens.set(customId, this.custom);
    this.limits = { ...LEDGER_LIMITS, ...opts.ledgerLimits };
    const ttls = opts.ttls ?? NETWORK_TTLS['stellar:testnet'];
    this.ttls = { ...ttls, minTemporaryTtl: opts.minTempTtl ?? ttls.minTemporaryTtl };
    this.host = new Host({
      networkId: this.networkId,
      tokens: this.tokens,
      maxEntryTtl: this.ttls.maxEntryTtl,
      minTempTtl: this.ttls.minTemporaryTtl,
      minPersistentTtl: this.ttls.minPersistentTtl,
    });
    this.genesis(opts.history);
  }

  // ---- ledger lifecycle -----------------------------------------------------------------

  latest(): LedgerRecord {
    return this.ledgers[this.ledgers.length - 1]!;
  }

  private genesis(history: LedgerOptions['history']): void {
    const seq = GENESIS_LEDGER;
    // Never more history than the ledgers kept.
    const behind = history ? Math.max(0, Math.min(Math.floor(history.ledgers), this.retention - 1)) : 0;
    const closedAt = (ledgersAgo: number) => Math.floor((this.now() - ledgersAgo * (history?.cadenceMs ?? 0)) / 1000);
    putAccount(this.state, this.usdc.issuer!, 10_000_000n * 10_000_000n, seq);
    const live = seq + MAX_ENTRY_TTL - 1;
    this.state.put(
      instanceKey(this.usdc.contractId),
      sacInstance(this.usdc.contractId, this.usdc.assetCode!, this.usdc.issuer!),
      seq,
      live,
    );
    this.state.put(instanceKey(this.custom.contractId), customTokenInstance(this.custom.contractId), seq, live);
    this.ledgers.push(ledgerRecord(seq, closedAt(behind), [], new Uint8Array(32)));
    this.ledgerTxCounts.push(0);
    for (let i = 1; i <= behind; i++) {
      this.ledgers.push(ledgerRecord(seq + i, closedAt(behind - i), [], Buffer.from(this.latest().hash, 'hex')));
      this.ledgerTxCounts.push(0);
    }
  }

  /**
   * getFeeStats' Soroban inclusion fees: what the last 50 ledgers (stellar-rpc's window) charged
   * their Soroban transactions above the resource fee, as stellar-rpc computes it (fee charged minus
   * resource fee charged: not per operation, so a fee bump's is twice its ledger's rate). Charged,
   * not bid: while ledgers are not full a transaction bidding far above the minimum pays the minimum.
   */
  sorobanFeeStats(): { fees: number[]; ledgerCount: number } {
    return { fees: this.feeWindow.flatMap((l) => l.charged), ledgerCount: this.feeWindow.length };
  }

  /**
   * Close the next ledger: apply pending transactions in submission order. `skip` ledgers are
   * passed over first (closed empty and not kept: time travel for TTLs, docs/DEVNET.md); the
   * close time still follows the clock.
   */
  closeLedger(skip = 0): LedgerRecord {
    const prev = this.latest();
    const seq = prev.sequence + 1 + Math.max(0, Math.floor(skip));
    const closeTime = Math.max(prev.closeTime, Math.floor(this.now() / 1000));
    const { included, waiting, inclusionPerOp } = selectForLedger(this.pending, this.limits);
    // Those the ledger had no room for wait, ahead of later submissions.
    this.pending = waiting;
    const applied: xdr.TransactionEnvelope[] = [];
    const charged: number[] = [];
    let order = 0;
    for (const p of included) {
      // stellar-core trims transactions that became invalid (e.g. time bounds) from the set.
      if (validateTransaction(this.state, p.parsed, closeTime, seq)) continue;
      order += 1;
      try {
        if (isCreateAccountTransaction(p.parsed.tx)) applyCreateAccounts(this, p.parsed, seq, closeTime, order);
        else if (isRestoreTransaction(p.parsed.tx)) applyRestore(this, p.parsed, seq, closeTime, order, inclusionPerOp);
        else applyTransaction(this, p.parsed, seq, closeTime, order, inclusionPerOp);
      } catch (e) {
        // A devnet bug must not lose the transaction: record it as txINTERNAL_ERROR, no fee.
        console.error('devnet: apply failed:', e instanceof Error ? e.message : e);
        recordInternalError(this, p.parsed, seq, closeTime, order);
      }
      applied.push(p.parsed.envelope);
      if (p.parsed.tx.ext.type === 'sorobanData') charged.push(inclusionPerOp * p.parsed.numOps);
    }
    this.feeWindow.push({ sequence: seq, charged });
    if (this.feeWindow.length > FEE_STATS_LEDGERS) this.feeWindow.shift();
    this.ledgers.push(ledgerRecord(seq, closeTime, applied, Buffer.from(prev.hash, 'hex'), inclusionPerOp));
    this.ledgerTxCounts.push(applied.length);
    this.keptTransactions += applied.length;
    this.prune(seq);
    return this.latest();
  }

  /**
   * Forgets what a real network no longer serves, so a devnet that runs for days stays bounded by
   * time and by rate: at every close, the ledgers past the retention window, then the oldest
   * ledgers while more than `retentionTransactions` transactions remain (never the latest), and
   * the transaction records older than the oldest ledger kept (as stellar-rpc does; records are
   * inserted in ledger order, so this stops at the first kept one), and authorization nonces past
   * the same count whose signature has expired (LedgerState.pruneSpentNonces). Swept every min(1000,
   * retention) ledgers: temporary entries (authorization nonces) past their live-until ledger (as
   * the network deletes them).
   */
  private prune(seq: number): void {
    let drop = Math.max(0, this.ledgers.length - this.retention);
    let kept = this.keptTransactions;
    for (let i = 0; i < drop; i++) kept -= this.ledgerTxCounts[i]!;
    while (kept > this.retentionTransactions && drop < this.ledgers.length - 1) kept -= this.ledgerTxCounts[drop++]!;
    if (drop > 0) {
      this.ledgers.splice(0, drop);
      this.ledgerTxCounts.splice(0, drop);
      this.keptTransactions = kept;
      const oldest = this.ledgers[0]!.sequence;
      for (const [h, rec] of this.txs) {
        if (rec.ledger >= oldest) break;
        this.txs.delete(h);
      }
    }
    // Nonces are bounded by the same count: beyond it, those whose signature expired go first.
    this.state.pruneSpentNonces(seq, this.retentionTransactions);
    const sweep = Math.min(1000, this.retention);
    if (Math.floor(seq / sweep) === Math.floor((this.ledgers.at(-2)?.sequence ?? seq) / sweep)) return;
    this.state.pruneExpiredTemporary(seq);
  }

  // ---- accounts and balances ------------------------------------------------------------

  account(g: string): xdr.AccountEntry | null {
    return readAccount(this.state, g);
  }

  /** Create or top up an account: XLM, optional USDC trustline and USDC. */
  fund(g: string, opts: { xlmStroops?: bigint; usdcTrustline?: boolean; usdc?: bigint } = {}): void {
    if (!StrKey.isValidEd25519PublicKey(g)) throw new RpcParamError(`invalid account address: ${g}`);
    const seq = this.latest().sequence;
    const acct = this.account(g);
    putAccount(this.state, g, (acct?.balance ?? 0n) + (opts.xlmStroops ?? 10_000n * 10_000_000n), seq);
    const wantTrust = opts.usdcTrustline ?? true;
    const usdc = opts.usdc ?? 0n;
    if (g === this.usdc.issuer!) return;
    const key = trustlineKey(g, alphaNum4Asset('USDC', this.usdc.issuer!));
    const tl = this.state.get(key);
    if (!tl && (wantTrust || usdc > 0n)) {
      this.state.put(
        key,
        xdr.LedgerEntryData.trustline(
          new xdr.TrustLineEntry({
            accountId: accountIdOf(g),
            asset: alphaNum4Asset('USDC', this.usdc.issuer!),
            balance: 0n,
            limit: I64_MAX,
            flags: 1,
            ext: xdr.TrustLineEntryExt.v0(),
          }),
        ),
        seq,
      );
      const a = this.account(g)!;
      replaceAccount(this.state, g, { numSubEntries: a.numSubEntries + 1 }, seq);
    }
    if (usdc > 0n) this.mint(this.usdc, g, usdc);
  }

  private adjustTrustline(g: string, patch: (t: xdr.TrustLineEntry) => Partial<{ balance: bigint; flags: number }>): void {
    const key = trustlineKey(g, alphaNum4Asset('USDC', this.usdc.issuer!));
    const e = this.state.get(key);
    if (!e || e.data.type !== 'trustline') throw new RpcParamError(`account ${g} has no USDC trustline`);
    const t = e.data.trustLine;
    const p = patch(t);
    this.state.put(
      key,
      xdr.LedgerEntryData.trustline(
        new xdr.TrustLineEntry({
          accountId: t.accountId,
          asset: t.asset,
          balance: p.balance ?? t.balance,
          limit: t.limit,
          flags: p.flags ?? t.flags,
          ext: t.ext,
        }),
      ),
      this.latest().sequence,
    );
  }

  setUsdcAuthorized(g: string, authorized: boolean): void {
    this.adjustTrustline(g, (t) => ({ flags: authorized ? t.flags | 1 : t.flags & ~1 }));
  }

  /** Set signers and thresholds (multisig tests). `thresholds` = [master, low, med, high]. */
  setSigners(g: string, thresholds: [number, number, number, number], signers: Array<{ publicKey: string; weight: number }>): void {
    const list = signers.map(
      (s) => new xdr.Signer({ key: xdr.SignerKey.signerKeyTypeEd25519(StrKey.decodeEd25519PublicKey(s.publicKey)), weight: s.weight }),
    );
    replaceAccount(this.state, g, { thresholds: new Uint8Array(thresholds), signers: list }, this.latest().sequence);
  }

  /** Mint `amount` of a token to a G or C address: the token's own credit path, no auth, no events. */
  mint(token: TokenModel, address: string, amount: bigint): void {
    if (amount < 0n) throw new RpcParamError('mint amount must be >= 0');
    let holder: xdr.ScAddress;
    try {
      holder = scAddress(address);
    } catch {
      throw new RpcParamError(`invalid address: ${address}`);
    }
    const view = new StateView(this.state, this.latest().sequence);
    try {
      this.host.credit(view, token, holder, amount);
    } catch (e) {
      throw new RpcParamError(`cannot mint to ${address}: ${e instanceof HostError ? e.detail : String(e)}`);
    }
    view.commit();
  }

  /** A token balance read straight from state (null when a G holder has no trustline). */
  tokenBalance(token: TokenModel, address: string): bigint | null {
    const seq = this.latest().sequence;
    const res = this.host.invoke(
      {
        view: new StateView(this.state, seq),
        ledgerSeq: seq,
        source: this.usdc.issuer!,
        authMode: 'record',
        authEntries: [],
        useUpgradedAuth: false,
        randomNonce: () => 0n,
      },
      token.contractId,
      'balance',
      [xdr.ScVal.scvAddress(scAddress(address))],
    );
    return res.ok ? i128Value(res.retval) : null;
  }

  randomNonce = (): bigint => {
    const b = this.random();
    return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0) & I64_MAX;
  };

  /** simulateTransaction against the latest ledger (simulate.ts). */
  simulate(envelopeB64: string, opts: SimulateOptions = {}): Record<string, unknown> {
    return simulateTransaction(this, envelopeB64, opts);
  }

  // ---- submission -----------------------------------------------------------------------

  /** Parse an envelope for submission; throws RpcParamError on undecodable input. */
  parse(envelopeB64: string): ParsedTx {
    return parseTransaction(this.networkId, envelopeB64);
  }

  /** `opts.parsed`: the envelope as the caller already parsed it (sendTransaction checks it first), not parsed again. */
  submit(envelopeB64: string, opts: { drop?: boolean; parsed?: ParsedTx } = {}): SendOutcome {
    const p = opts.parsed ?? this.parse(envelopeB64);
    if (this.pending.some((q) => q.parsed.hash === p.hash)) return { status: 'DUPLICATE', hash: p.hash };
    // stellar-core keeps at most one queued transaction per (inner) source account.
    if (this.pending.some((q) => q.parsed.source === p.source)) {
      return { status: 'TRY_AGAIN_LATER', hash: p.hash };
    }
    const latest = this.latest();
    const err = validateTransaction(this.state, p, Math.max(latest.closeTime, Math.floor(this.now() / 1000)), latest.sequence + 1);
    if (err) return { status: 'ERROR', hash: p.hash, errorResult: err };
    if (!opts.drop) this.pending.push({ parsed: p, submittedAt: this.now() });
    return { status: 'PENDING', hash: p.hash };
  }

  pendingCount(): number {
    return this.pending.length;
  }
}
