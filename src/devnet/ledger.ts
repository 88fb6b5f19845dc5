/**
 * The devnet ledger: accounts and token balances, ledger closes, simulation (side-effect
 * free), stellar-core-like transaction validation on submit, and apply at ledger close
 * with fee charging, sequence consumption, footprint enforcement, results and meta.
 */
import { Asset, Networks, StrKey, hash, xdr } from '@stellar/stellar-sdk';
import { BASE_FEE, nonRefundableFee, refundableFee } from './fees.ts';
import { Host, HostError, contractDataEntry, instanceKey, type AuthMode, type InvokeResult, type TokenModel } from './host.ts';
import {
  RpcParamError,
  debugHostError,
  declaredFromData,
  declaredResources,
  decodeEnvelope,
  estimateSignedSize,
  footprintOf,
  innerTx,
  ledgerEntry,
  muxedToG,
  refundablesOf,
  txHash,
} from './envelope.ts';
import { LedgerState, StateView } from './state.ts';

export { RpcParamError } from './envelope.ts';
import {
  accountIdOf,
  accountKey,
  addressString,
  alphaNum4Asset,
  b64,
  bytesOf,
  hex,
  i128,
  i128Value,
  keyId,
  networkIdOf,
  scAddress,
  trustlineKey,
  verifyEd25519,
  ZERO32,
  contractIdBytes,
} from './xdr.ts';

export const USDC_ISSUER = 'GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5';
/** Protocol 27: the first with CAP-71 ADDRESS_V2 credentials, which the devnet accepts. */
export const PROTOCOL_VERSION = 27;
/** Testnet-like TTL settings (ledgers). */
export const MAX_ENTRY_TTL = 3_110_400;
export const MIN_TEMP_TTL = 17_280;
const I64_MAX = (1n << 63n) - 1n;
const GENESIS_LEDGER = 1000;
/** Default ledgers kept for getLedgers / getTransaction (testnet's RPC keeps about a day at 5 s). */
export const DEFAULT_RETENTION = 17_280;


export interface LedgerRecord {
  sequence: number;
  closeTime: number;
  hash: string;
  /** LedgerHeader (what getLatestLedger returns). */
  headerXdr: string;
  /** LedgerHeaderHistoryEntry (what getLedgers returns). */
  historyEntryXdr: string;
  metadataXdr: string;
}

export interface TxRecord {
  status: 'SUCCESS' | 'FAILED';
  ledger: number;
  createdAt: number;
  applicationOrder: number;
  feeBump: boolean;
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  transactionEventsXdr: string[];
  contractEventsXdr: string[][];
  /** fn_call / contract / fn_return / error diagnostics (the network runs with diagnostics on). */
  diagnosticEventsXdr: string[];
}

interface ParsedTx {
  envelope: xdr.TransactionEnvelope;
  hash: string;
  innerHash: string | null;
  /** Inner (or only) transaction. */
  tx: xdr.Transaction;
  innerSignatures: xdr.DecoratedSignature[];
  feeBump: xdr.FeeBumpTransaction | null;
  outerSignatures: xdr.DecoratedSignature[];
  source: string;
  feeSource: string;
  /** Full fee the fee source offers (outer fee for fee-bumps). */
  fee: bigint;
  numOps: number;
  innerEnvelopeSize: number;
}

interface PendingTx {
  parsed: ParsedTx;
  submittedAt: number;
}

export type SendStatus = 'PENDING' | 'DUPLICATE' | 'TRY_AGAIN_LATER' | 'ERROR';

export interface SendOutcome {
  status: SendStatus;
  hash: string;
  errorResult?: xdr.TransactionResult;
}

export interface SimulateOptions {
  authMode?: AuthMode;
  useUpgradedAuth?: boolean;
}

export interface LedgerOptions {
  networkPassphrase?: string;
  /** Ledgers of history kept (getLedgers, getTransaction); default 17,280. */
  retentionLedgers?: number;
  random?: () => Uint8Array;
  now?: () => number;
}

type TxCode = Exclude<xdr.TransactionResultResult['type'], 'txSuccess' | 'txFailed' | 'txFeeBumpInnerSuccess' | 'txFeeBumpInnerFailed'>;

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

  constructor(opts: LedgerOptions = {}) {
    this.retention = Math.max(1, Math.floor(opts.retentionLedgers ?? DEFAULT_RETENTION));
    this.networkPassphrase = opts.networkPassphrase ?? Networks.TESTNET;
    this.networkId = networkIdOf(this.networkPassphrase);
    this.random = opts.random ?? (() => crypto.getRandomValues(new Uint8Array(32)));
    this.now = opts.now ?? (() => Date.now());
    const usdcId = new Asset('USDC', USDC_ISSUER).contractId(this.networkPassphrase);
    this.usdc = { kind: 'sac', contractId: usdcId, assetName: `USDC:${USDC_ISSUER}`, issuer: USDC_ISSUER, assetCode: 'USDC' };
    const customId = StrKey.encodeContract(hash(new TextEncoder().encode(`svc devnet custom SEP-41 token|${this.networkPassphrase}`)));
    this.custom = { kind: 'custom', contractId: customId };
    this.tokens.set(usdcId, this.usdc);
    this.tokens.set(customId, this.custom);
    this.host = new Host({ networkId: this.networkId, tokens: this.tokens, maxEntryTtl: MAX_ENTRY_TTL, minTempTtl: MIN_TEMP_TTL });
    this.genesis();
  }

  // ---- ledger lifecycle -----------------------------------------------------------------

  latest(): LedgerRecord {
    return this.ledgers[this.ledgers.length - 1]!;
  }

  private genesis(): void {
    const seq = GENESIS_LEDGER;
    this.putAccount(USDC_ISSUER, 10_000_000n * 10_000_000n, seq);
    this.state.put(
      instanceKey(this.usdc.contractId),
      contractInstance(instanceKey(this.usdc.contractId), xdr.ContractExecutable.contractExecutableStellarAsset()),
      seq,
      seq + MAX_ENTRY_TTL - 1,
    );
    this.state.put(
      instanceKey(this.custom.contractId),
      contractInstance(instanceKey(this.custom.contractId), xdr.ContractExecutable.contractExecutableWasm(hash(new TextEncoder().encode('svc devnet sep41 token wasm')))),
      seq,
      seq + MAX_ENTRY_TTL - 1,
    );
    this.recordLedger(seq, Math.floor(this.now() / 1000), [], new Uint8Array(32));
  }

  /** Close the next ledger: apply pending transactions in submission order. */
  closeLedger(): LedgerRecord {
    const prev = this.latest();
    const seq = prev.sequence + 1;
    const closeTime = Math.max(prev.closeTime, Math.floor(this.now() / 1000));
    const batch = this.pending;
    this.pending = [];
    const applied: xdr.TransactionEnvelope[] = [];
    let order = 0;
    for (const p of batch) {
      // stellar-core trims transactions that became invalid (e.g. time bounds) from the set.
      if (this.validate(p.parsed, closeTime, seq)) continue;
      order += 1;
      try {
        this.apply(p.parsed, seq, closeTime, order);
      } catch (e) {
        // A devnet bug must not lose the transaction: record it as txINTERNAL_ERROR, no fee.
        console.error('devnet: apply failed:', e instanceof Error ? e.message : e);
        this.recordInternalError(p.parsed, seq, closeTime, order);
      }
      applied.push(p.parsed.envelope);
    }
    this.recordLedger(seq, closeTime, applied, Buffer.from(prev.hash, 'hex'));
    if (this.ledgers.length > this.retention) {
      this.ledgers.splice(0, this.ledgers.length - this.retention);
      // Like stellar-rpc, forget transactions older than the retention window (swept periodically).
      if (seq % Math.min(1000, this.retention) === 0) {
        const oldest = this.ledgers[0]!.sequence;
        for (const [h, rec] of this.txs) if (rec.ledger < oldest) this.txs.delete(h);
      }
    }
    return this.latest();
  }

  private recordLedger(seq: number, closeTime: number, txs: xdr.TransactionEnvelope[], previousLedgerHash: Uint8Array): void {
    const header = new xdr.LedgerHeader({
      ledgerVersion: PROTOCOL_VERSION,
      previousLedgerHash,
      scpValue: new xdr.StellarValue({
        txSetHash: hash(new Uint8Array(txs.flatMap((t) => [...t.toXdr()]))),
        closeTime: BigInt(closeTime),
        upgrades: [],
        ext: xdr.StellarValueExt.stellarValueBasic(),
      }),
      txSetResultHash: ZERO32,
      bucketListHash: ZERO32,
      ledgerSeq: seq,
      totalCoins: 1_000_000_000_000_000_000n,
      feePool: 0n,
      inflationSeq: 0,
      idPool: 0n,
      baseFee: BASE_FEE,
      baseReserve: 5_000_000,
      maxTxSetSize: 1000,
      skipList: [ZERO32, ZERO32, ZERO32, ZERO32],
      ext: xdr.LedgerHeaderExt.v0(),
    });
    const headerHash = hash(header.toXdr());
    const historyEntry = new xdr.LedgerHeaderHistoryEntry({ hash: headerHash, header, ext: xdr.LedgerHeaderHistoryEntryExt.v0() });
    const meta = xdr.LedgerCloseMeta.v0(
      new xdr.LedgerCloseMetaV0({
        ledgerHeader: historyEntry,
        txSet: new xdr.TransactionSet({ previousLedgerHash, txs }),
        txProcessing: [],
        upgradesProcessing: [],
        scpInfo: [],
      }),
    );
    this.ledgers.push({ sequence: seq, closeTime, hash: hex(headerHash), headerXdr: b64(header), historyEntryXdr: b64(historyEntry), metadataXdr: b64(meta) });
  }

  // ---- accounts and balances ------------------------------------------------------------

  private putAccount(g: string, balance: bigint, seq: number): void {
    const existing = this.state.get(accountKey(g));
    const prev = existing?.data.type === 'account' ? existing.data.account : null;
    const entry = new xdr.AccountEntry({
      accountId: accountIdOf(g),
      balance,
      seqNum: prev ? prev.seqNum : BigInt(seq) << 32n,
      numSubEntries: prev?.numSubEntries ?? 0,
      inflationDest: null,
      flags: 0,
      homeDomain: '',
      thresholds: prev ? bytesOf(prev.thresholds) : new Uint8Array([1, 0, 0, 0]),
      signers: prev?.signers ?? [],
      ext: xdr.AccountEntryExt.v0(),
    });
    this.state.put(accountKey(g), xdr.LedgerEntryData.account(entry), seq);
  }

  account(g: string): xdr.AccountEntry | null {
    const e = this.state.get(accountKey(g));
    return e?.data.type === 'account' ? e.data.account : null;
  }

  /** Create or top up an account: XLM, optional USDC trustline and USDC. */
  fund(g: string, opts: { xlmStroops?: bigint; usdcTrustline?: boolean; usdc?: bigint } = {}): void {
    if (!StrKey.isValidEd25519PublicKey(g)) throw new RpcParamError(`invalid account address: ${g}`);
    const seq = this.latest().sequence;
    const acct = this.account(g);
    this.putAccount(g, (acct?.balance ?? 0n) + (opts.xlmStroops ?? 10_000n * 10_000_000n), seq);
    const wantTrust = opts.usdcTrustline ?? true;
    const usdc = opts.usdc ?? 0n;
    if (g === USDC_ISSUER) return;
    const key = trustlineKey(g, alphaNum4Asset('USDC', USDC_ISSUER));
    const tl = this.state.get(key);
    if (!tl && (wantTrust || usdc > 0n)) {
      this.state.put(
        key,
        xdr.LedgerEntryData.trustline(
          new xdr.TrustLineEntry({ accountId: accountIdOf(g), asset: alphaNum4Asset('USDC', USDC_ISSUER), balance: 0n, limit: I64_MAX, flags: 1, ext: xdr.TrustLineEntryExt.v0() }),
        ),
        seq,
      );
      const a = this.account(g)!;
      this.replaceAccount(g, { numSubEntries: a.numSubEntries + 1 }, seq);
    }
    if (usdc > 0n) this.mint(this.usdc, g, usdc);
  }

  private replaceAccount(g: string, patch: Partial<{ balance: bigint; seqNum: bigint; numSubEntries: number; thresholds: Uint8Array; signers: xdr.Signer[] }>, seq: number, target: { put(k: xdr.LedgerKey, d: xdr.LedgerEntryData, ledger: number): void } = this.state): void {
    const a = this.account(g)!;
    const entry = new xdr.AccountEntry({
      accountId: a.accountId,
      balance: patch.balance ?? a.balance,
      seqNum: patch.seqNum ?? a.seqNum,
      numSubEntries: patch.numSubEntries ?? a.numSubEntries,
      inflationDest: a.inflationDest,
      flags: a.flags,
      homeDomain: a.homeDomain,
      thresholds: patch.thresholds ?? bytesOf(a.thresholds),
      signers: patch.signers ?? a.signers,
      ext: a.ext,
    });
    target.put(accountKey(g), xdr.LedgerEntryData.account(entry), seq);
  }

  private adjustTrustline(g: string, patch: (t: xdr.TrustLineEntry) => Partial<{ balance: bigint; flags: number }>): void {
    const key = trustlineKey(g, alphaNum4Asset('USDC', USDC_ISSUER));
    const e = this.state.get(key);
    if (!e || e.data.type !== 'trustline') throw new RpcParamError(`account ${g} has no USDC trustline`);
    const t = e.data.trustLine;
    const p = patch(t);
    this.state.put(
      key,
      xdr.LedgerEntryData.trustline(new xdr.TrustLineEntry({ accountId: t.accountId, asset: t.asset, balance: p.balance ?? t.balance, limit: t.limit, flags: p.flags ?? t.flags, ext: t.ext })),
      this.latest().sequence,
    );
  }

  setUsdcAuthorized(g: string, authorized: boolean): void {
    this.adjustTrustline(g, (t) => ({ flags: authorized ? t.flags | 1 : t.flags & ~1 }));
  }

  /** Set signers and thresholds (multisig tests). `thresholds` = [master, low, med, high]. */
  setSigners(g: string, thresholds: [number, number, number, number], signers: Array<{ publicKey: string; weight: number }>): void {
    const list = signers.map((s) => new xdr.Signer({ key: xdr.SignerKey.signerKeyTypeEd25519(StrKey.decodeEd25519PublicKey(s.publicKey)), weight: s.weight }));
    this.replaceAccount(g, { thresholds: new Uint8Array(thresholds), signers: list }, this.latest().sequence);
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
      { view: new StateView(this.state, seq), ledgerSeq: seq, source: USDC_ISSUER, authMode: 'record', authEntries: [], useUpgradedAuth: false, randomNonce: () => 0n },
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

  // ---- simulation -----------------------------------------------------------------------

  simulate(envelopeB64: string, opts: SimulateOptions = {}): Record<string, unknown> {
    const latest = this.latest();
    const envelope = decodeEnvelope(envelopeB64);
    const tx = innerTx(envelope);
    const fail = (error: string, events: string[] = []) => ({ error, events, latestLedger: latest.sequence });
    if (tx.operations.length !== 1) return fail(tx.operations.length === 0 ? 'Transaction contains no operations' : 'Transaction contains more than one operation');
    if (tx.memo.type !== 'memoNone') return fail('Transaction contains a memo, which is not supported for Soroban transactions');
    const op = tx.operations[0]!;
    if (op.body.type !== 'invokeHostFunction') return fail(`simulation of ${op.body.type} operations is not supported by the devnet`);
    const ihf = op.body.invokeHostFunctionOp;
    if (ihf.hostFunction.type !== 'hostFunctionTypeInvokeContract') return fail('only contract invocations are modelled by the devnet');
    const authMode: AuthMode = opts.authMode ?? (ihf.auth.length > 0 ? 'enforce' : 'record');
    if (authMode !== 'enforce' && ihf.auth.length > 0) return fail(`cannot set authMode to '${authMode}' with an auth footprint`);
    const source = muxedToG(op.sourceAccount ?? tx.sourceAccount);
    const seq = latest.sequence;
    const view = new StateView(this.state, seq);
    const call = ihf.hostFunction.invokeContract;
    const res = this.host.invoke(
      { view, ledgerSeq: seq, source, authMode, authEntries: ihf.auth, useUpgradedAuth: opts.useUpgradedAuth ?? false, randomNonce: this.randomNonce },
      addressString(call.contractAddress),
      String(call.functionName),
      call.args,
    );
    const events = res.diagnostics.map(b64);
    if (!res.ok) return fail(debugHostError(res.error!, res), events);

    const footprint = footprintOf(view);
    const resources = declaredResources(view, footprint);
    const sorobanData = (resourceFee: bigint) =>
      new xdr.SorobanTransactionData({
        ext: xdr.SorobanTransactionDataExt.v0(),
        resources: new xdr.SorobanResources({ footprint, instructions: resources.instructions, diskReadBytes: resources.diskReadBytes, writeBytes: resources.writeBytes }),
        resourceFee,
      });
    const auth = authMode === 'enforce' ? ihf.auth : res.recordedAuth;
    const txSize = estimateSignedSize(envelope, tx, sorobanData(0n), auth);
    const refundable = refundableFee(refundablesOf(res, seq));
    const resourceFee = BigInt(nonRefundableFee(resources, txSize) + refundable);
    const stateChanges = view.changed().map(([id, after]) => {
      const before = view.original(id);
      return {
        type: before ? (after ? 'updated' : 'deleted') : 'created',
        key: keyId(after?.key ?? before!.key),
        before: before ? b64(ledgerEntry(before)) : null,
        after: after ? b64(ledgerEntry(after)) : null,
      };
    });
    return {
      latestLedger: seq,
      minResourceFee: resourceFee.toString(),
      transactionData: b64(sorobanData(resourceFee)),
      events,
      results: [{ auth: authMode === 'enforce' ? [] : res.recordedAuth.map(b64), xdr: b64(res.retval) }],
      stateChanges,
    };
  }

  // ---- submission -----------------------------------------------------------------------

  /** Parse an envelope for submission; throws RpcParamError on undecodable input. */
  parse(envelopeB64: string): ParsedTx {
    const envelope = decodeEnvelope(envelopeB64);
    const networkId = this.networkId;
    if (envelope.type === 'envelopeTypeTxFeeBump') {
      const fb = envelope.feeBump.tx;
      const inner = fb.innerTx.v1;
      const innerEnv = xdr.TransactionEnvelope.envelopeTypeTx(inner);
      return {
        envelope,
        hash: hex(txHash(networkId, xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTxFeeBump(fb))),
        innerHash: hex(txHash(networkId, xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTx(inner.tx))),
        tx: inner.tx,
        innerSignatures: inner.signatures,
        feeBump: fb,
        outerSignatures: envelope.feeBump.signatures,
        source: muxedToG(inner.tx.sourceAccount),
        feeSource: muxedToG(fb.feeSource),
        fee: fb.fee,
        numOps: inner.tx.operations.length + 1,
        innerEnvelopeSize: innerEnv.toXdr().length,
      };
    }
    if (envelope.type !== 'envelopeTypeTx') throw new RpcParamError('invalid_xdr: v0 transaction envelopes are not supported');
    const tx = envelope.v1.tx;
    return {
      envelope,
      hash: hex(txHash(networkId, xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTx(tx))),
      innerHash: null,
      tx,
      innerSignatures: envelope.v1.signatures,
      feeBump: null,
      outerSignatures: [],
      source: muxedToG(tx.sourceAccount),
      feeSource: muxedToG(tx.sourceAccount),
      fee: BigInt(tx.fee),
      numOps: tx.operations.length,
      innerEnvelopeSize: envelope.toXdr().length,
    };
  }

  submit(envelopeB64: string, opts: { drop?: boolean } = {}): SendOutcome {
    const p = this.parse(envelopeB64);
    if (this.pending.some((q) => q.parsed.hash === p.hash)) return { status: 'DUPLICATE', hash: p.hash };
    // stellar-core keeps at most one queued transaction per (inner) source account.
    if (this.pending.some((q) => q.parsed.source === p.source)) {
      return { status: 'TRY_AGAIN_LATER', hash: p.hash };
    }
    const latest = this.latest();
    const err = this.validate(p, Math.max(latest.closeTime, Math.floor(this.now() / 1000)), latest.sequence + 1);
    if (err) return { status: 'ERROR', hash: p.hash, errorResult: err };
    if (!opts.drop) this.pending.push({ parsed: p, submittedAt: this.now() });
    return { status: 'PENDING', hash: p.hash };
  }

  pendingCount(): number {
    return this.pending.length;
  }

  /** stellar-core `checkValid`: returns the error TransactionResult, or null when valid. */
  private validate(p: ParsedTx, closeTime: number, ledgerSeq: number): xdr.TransactionResult | null {
    const minFee = BigInt(BASE_FEE * p.numOps);
    const fail = (code: TxCode, inner = false) => errorResult(p, code, inner, minFee);
    const tx = p.tx;
    // Fee-bump outer checks.
    if (p.feeBump) {
      const feeSource = this.account(p.feeSource);
      if (!feeSource) return fail('txNoAccount');
      if (!this.signaturesOk(p.outerSignatures, p.feeSource, p.hash, 'low')) return fail('txBadAuth');
    }
    if (tx.operations.length === 0) return fail('txMissingOperation', true);
    const sorobanOps = tx.operations.filter((o) => ['invokeHostFunction', 'extendFootprintTtl', 'restoreFootprint'].includes(o.body.type));
    if (sorobanOps.length > 0 && (tx.operations.length !== 1 || tx.ext.type !== 'sorobanData')) return fail('txMalformed', true);
    if (sorobanOps.length === 0 && tx.ext.type === 'sorobanData') return fail('txMalformed', true);
    const op = tx.operations[0]!;
    // Not modelled: classic operations and TTL extension/restore (documented in docs/DEVNET.md).
    if (op.body.type !== 'invokeHostFunction') return fail('txNotSupported', true);
    if (op.body.type === 'invokeHostFunction' && (tx.memo.type !== 'memoNone' || tx.sourceAccount.type !== 'keyTypeEd25519' || (op.sourceAccount && op.sourceAccount.type !== 'keyTypeEd25519'))) {
      return fail('txSorobanInvalid', true);
    }
    // Time bounds.
    const tb = tx.cond.type === 'precondTime' ? tx.cond.timeBounds : tx.cond.type === 'precondV2' ? tx.cond.v2.timeBounds : null;
    if (tb) {
      if (tb.maxTime !== 0n && tb.maxTime < BigInt(closeTime)) return fail('txTooLate', true);
      if (tb.minTime > BigInt(closeTime)) return fail('txTooEarly', true);
    }
    if (tx.cond.type === 'precondV2' && tx.cond.v2.ledgerBounds) {
      const lb = tx.cond.v2.ledgerBounds;
      if (lb.maxLedger !== 0 && lb.maxLedger <= ledgerSeq) return fail('txTooLate', true);
      if (lb.minLedger > ledgerSeq) return fail('txTooEarly', true);
    }
    // Source account and sequence.
    const source = this.account(p.source);
    if (!source) return fail('txNoAccount', true);
    if (tx.seqNum !== source.seqNum + 1n) return fail('txBadSeq', true);
    // Fees.
    const resourceFee = tx.ext.type === 'sorobanData' ? tx.ext.sorobanData.resourceFee : 0n;
    if (resourceFee < 0n) return fail('txMalformed', true);
    const innerFee = BigInt(tx.fee);
    if (p.feeBump) {
      // The outer fee pays: core validates the inner transaction without charging its fee.
      if (resourceFee > p.fee) return fail('txSorobanInvalid', true);
      if (p.fee - resourceFee < minFee) return fail('txInsufficientFee');
    } else {
      if (resourceFee > innerFee) return fail('txSorobanInvalid', true);
      if (innerFee - resourceFee < minFee) return fail('txInsufficientFee', true);
    }
    if (tx.ext.type === 'sorobanData') {
      const sd = tx.ext.sorobanData;
      const fp = sd.resources.footprint;
      const ids = [...fp.readOnly, ...fp.readWrite].map(keyId);
      if (new Set(ids).size !== ids.length) return fail('txSorobanInvalid', true);
      if ([...fp.readOnly, ...fp.readWrite].some((k) => k.type === 'ttl')) return fail('txSorobanInvalid', true);
      const declared = declaredFromData(sd);
      if (resourceFee < BigInt(nonRefundableFee(declared, p.innerEnvelopeSize))) return fail('txInsufficientFee', true);
    }
    const feePayer = this.account(p.feeSource);
    if (!feePayer || feePayer.balance < (p.feeBump ? p.fee : innerFee)) return fail('txInsufficientBalance', !p.feeBump);
    // Envelope signatures of the (inner) source.
    if (!this.signaturesOk(p.innerSignatures, p.source, p.innerHash ?? p.hash, 'medium')) return fail('txBadAuth', true);
    return null;
  }

  /**
   * Signatures reach the account's threshold (at least weight 1) and none is unknown or bad.
   * Level: medium for invokeHostFunction sources, low for a fee-bump's fee source (as in core).
   */
  private signaturesOk(sigs: xdr.DecoratedSignature[], g: string, txHashHex: string, level: 'low' | 'medium'): boolean {
    const a = this.account(g);
    if (!a) return false;
    const payload = Buffer.from(txHashHex, 'hex');
    const thresholds = bytesOf(a.thresholds);
    const candidates: Array<{ pk: Uint8Array; weight: number }> = [
      { pk: StrKey.decodeEd25519PublicKey(g), weight: thresholds[0] ?? 0 },
      ...a.signers.filter((s) => s.key.type === 'signerKeyTypeEd25519').map((s) => ({ pk: bytesOf((s.key as xdr.SignerKey & { ed25519: Uint8Array }).ed25519), weight: s.weight })),
    ];
    let weight = 0;
    const usedSigners = new Set<number>();
    for (const sig of sigs) {
      const hint = bytesOf(sig.hint);
      const idx = candidates.findIndex((c, i) => !usedSigners.has(i) && Buffer.from(c.pk.subarray(28)).equals(Buffer.from(hint)) && verifyEd25519(c.pk, payload, bytesOf(sig.signature)));
      if (idx < 0) return false; // unknown or bad signature (txBAD_AUTH / txBAD_AUTH_EXTRA)
      usedSigners.add(idx);
      weight += candidates[idx]!.weight;
    }
    return weight >= Math.max(1, thresholds[level === 'low' ? 1 : 2] ?? 0);
  }

  // ---- apply ----------------------------------------------------------------------------

  private recordInternalError(p: ParsedTx, seq: number, closeTime: number, order: number): void {
    const result = new xdr.TransactionResult({ feeCharged: 0n, result: xdr.TransactionResultResult.txInternalError(), ext: xdr.TransactionResultExt.v0() });
    const meta = xdr.TransactionMeta.v4(
      new xdr.TransactionMetaV4({ ext: xdr.ExtensionPoint.v0(), txChangesBefore: [], operations: [], txChangesAfter: [], sorobanMeta: null, events: [], diagnosticEvents: [] }),
    );
    const record: TxRecord = {
      status: 'FAILED',
      ledger: seq,
      createdAt: closeTime,
      applicationOrder: order,
      feeBump: p.feeBump !== null,
      envelopeXdr: b64(p.envelope),
      resultXdr: b64(result),
      resultMetaXdr: b64(meta),
      transactionEventsXdr: [],
      contractEventsXdr: [[]],
      diagnosticEventsXdr: [],
    };
    this.txs.set(p.hash, record);
    if (p.innerHash) this.txs.set(p.innerHash, record);
  }

  private apply(p: ParsedTx, seq: number, closeTime: number, order: number): void {
    const tx = p.tx;
    const sd = tx.ext.type === 'sorobanData' ? tx.ext.sorobanData : null;
    const before: xdr.LedgerEntryChange[] = [];
    const snapshot = (g: string) => {
      const e = this.state.get(accountKey(g))!;
      before.push(xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(e)));
    };
    // Sequence consumed regardless of the outcome.
    snapshot(p.source);
    this.replaceAccount(p.source, { seqNum: tx.seqNum }, seq);
    before.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(this.state.get(accountKey(p.source))!)));

    const op = tx.operations[0]!;
    let res: InvokeResult | null = null;
    let failure: 'trapped' | 'resourceLimitExceeded' | 'insufficientRefundableFee' | null = null;
    let view: StateView | null = null;
    const declared = sd ? declaredFromData(sd) : null;
    let refundable = 0;
    const ihf = op.body.type === 'invokeHostFunction' ? op.body.invokeHostFunctionOp : null;
    const hf = ihf?.hostFunction;
    if (ihf && hf && hf.type === 'hostFunctionTypeInvokeContract' && sd && declared) {
      const call = hf.invokeContract;
      view = new StateView(this.state, seq);
      res = this.host.invoke(
        { view, ledgerSeq: seq, source: muxedToG(op.sourceAccount ?? tx.sourceAccount), authMode: 'enforce', authEntries: ihf.auth, useUpgradedAuth: false, randomNonce: this.randomNonce },
        addressString(call.contractAddress),
        String(call.functionName),
        call.args,
      );
      if (!res.ok) failure = 'trapped';
      else {
        const fp = sd.resources.footprint;
        const ro = new Set(fp.readOnly.map(keyId));
        const rw = new Set(fp.readWrite.map(keyId));
        for (const [id, acc] of view.accesses) {
          if (acc.write ? !rw.has(id) : !ro.has(id) && !rw.has(id)) {
            failure = 'trapped';
            res.error = new HostError('Storage', 'ExceededLimit', 'trying to access contract storage key outside of the footprint');
            break;
          }
        }
        if (!failure) {
          const used = declaredResources(view, footprintOf(view));
          if (used.diskReadBytes > declared.diskReadBytes || used.writeBytes > declared.writeBytes || used.instructions > declared.instructions) failure = 'resourceLimitExceeded';
        }
        if (!failure) {
          refundable = refundableFee(refundablesOf(res, seq));
          const budget = Number(sd.resourceFee) - nonRefundableFee(declared, p.innerEnvelopeSize);
          if (refundable > budget) failure = 'insufficientRefundableFee';
        }
      }
    } else {
      failure = 'trapped';
    }
    if (failure) refundable = 0;
    const nonRefundable = declared ? nonRefundableFee(declared, p.innerEnvelopeSize) : 0;
    const inclusion = BASE_FEE * p.numOps;
    const charged = BigInt(inclusion + nonRefundable + refundable);

    // Fee charged to the fee source, success or not.
    snapshot(p.feeSource);
    const payer = this.account(p.feeSource)!;
    this.replaceAccount(p.feeSource, { balance: payer.balance - charged }, seq);
    before.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(this.state.get(accountKey(p.feeSource))!)));

    const opChanges: xdr.LedgerEntryChange[] = [];
    if (!failure && view) {
      for (const [id, after] of view.changed()) {
        const prev = view.original(id);
        if (prev) opChanges.push(xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(prev)));
        if (after) opChanges.push(prev ? xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(after)) : xdr.LedgerEntryChange.ledgerEntryCreated(ledgerEntry(after)));
        else opChanges.push(xdr.LedgerEntryChange.ledgerEntryRemoved(prev!.key));
      }
      view.commit();
    }
    const ok = !failure && res !== null;
    const contractEvents = ok ? res!.contractEvents : [];
    const retval = ok ? res!.retval : xdr.ScVal.scvVoid();
    const ihfResult = ok
      ? xdr.InvokeHostFunctionResult.invokeHostFunctionSuccess(hash(new xdr.InvokeHostFunctionSuccessPreImage({ returnValue: retval, events: contractEvents }).toXdr()))
      : failure === 'resourceLimitExceeded'
        ? xdr.InvokeHostFunctionResult.invokeHostFunctionResourceLimitExceeded()
        : failure === 'insufficientRefundableFee'
          ? xdr.InvokeHostFunctionResult.invokeHostFunctionInsufficientRefundableFee()
          : xdr.InvokeHostFunctionResult.invokeHostFunctionTrapped();
    const opResults = [xdr.OperationResult.opInner(xdr.OperationResultTr.invokeHostFunction(ihfResult))];
    let result: xdr.TransactionResultResult;
    if (p.feeBump) {
      const innerRes = new xdr.InnerTransactionResult({
        feeCharged: 0n,
        result: ok ? xdr.InnerTransactionResultResult.txSuccess(opResults) : xdr.InnerTransactionResultResult.txFailed(opResults),
        ext: xdr.InnerTransactionResultExt.v0(),
      });
      const pair = new xdr.InnerTransactionResultPair({ transactionHash: Buffer.from(p.innerHash!, 'hex'), result: innerRes });
      result = ok ? xdr.TransactionResultResult.txFeeBumpInnerSuccess(pair) : xdr.TransactionResultResult.txFeeBumpInnerFailed(pair);
    } else {
      result = ok ? xdr.TransactionResultResult.txSuccess(opResults) : xdr.TransactionResultResult.txFailed(opResults);
    }
    const txResult = new xdr.TransactionResult({ feeCharged: charged, result, ext: xdr.TransactionResultExt.v0() });

    // CAP-67 fee events: the full fee charged up front, then the refund (negative).
    const nativeSac = Asset.native().contractId(this.networkPassphrase);
    const feeEvent = (amount: bigint, stage: xdr.TransactionEventStage) =>
      new xdr.TransactionEvent({
        stage,
        event: new xdr.ContractEvent({
          ext: xdr.ExtensionPoint.v0(),
          contractId: new xdr.ContractId(contractIdBytes(nativeSac)),
          type: xdr.ContractEventType.contract,
          body: xdr.ContractEventBody.v0(new xdr.ContractEventV0({ topics: [xdr.ScVal.scvSymbol('fee'), xdr.ScVal.scvAddress(scAddress(p.feeSource))], data: i128(amount) })),
        }),
      });
    const declaredFee = (p.feeBump ? p.fee : BigInt(tx.fee));
    const txEvents = [feeEvent(declaredFee, xdr.TransactionEventStage.transactionEventStageBeforeAllTxs), feeEvent(charged - declaredFee, xdr.TransactionEventStage.transactionEventStageAfterAllTxs)];

    const diagnosticEvents = res ? (ok ? res.diagnostics : res.diagnostics.map((d) => new xdr.DiagnosticEvent({ inSuccessfulContractCall: false, event: d.event }))) : [];
    const meta = xdr.TransactionMeta.v4(
      new xdr.TransactionMetaV4({
        ext: xdr.ExtensionPoint.v0(),
        txChangesBefore: before,
        operations: [new xdr.OperationMetaV2({ ext: xdr.ExtensionPoint.v0(), changes: opChanges, events: contractEvents })],
        txChangesAfter: [],
        sorobanMeta: new xdr.SorobanTransactionMetaV2({
          ext: xdr.SorobanTransactionMetaExt.v1(
            new xdr.SorobanTransactionMetaExtV1({
              ext: xdr.ExtensionPoint.v0(),
              totalNonRefundableResourceFeeCharged: BigInt(nonRefundable),
              totalRefundableResourceFeeCharged: BigInt(refundable),
              rentFeeCharged: 0n,
            }),
          ),
          returnValue: ok ? retval : null,
        }),
        events: txEvents,
        diagnosticEvents,
      }),
    );
    const record: TxRecord = {
      status: ok ? 'SUCCESS' : 'FAILED',
      ledger: seq,
      createdAt: closeTime,
      applicationOrder: order,
      feeBump: p.feeBump !== null,
      envelopeXdr: b64(p.envelope),
      resultXdr: b64(txResult),
      resultMetaXdr: b64(meta),
      transactionEventsXdr: txEvents.map(b64),
      diagnosticEventsXdr: diagnosticEvents.map(b64),
      contractEventsXdr: [contractEvents.map(b64)],
    };
    this.txs.set(p.hash, record);
    if (p.innerHash) this.txs.set(p.innerHash, record);
  }
}

// ---- helpers ------------------------------------------------------------------------------

const contractInstance = (key: xdr.LedgerKey, executable: xdr.ContractExecutable): xdr.LedgerEntryData =>
  contractDataEntry(key, xdr.ScVal.scvContractInstance(new xdr.ScContractInstance({ executable, storage: null })));

function errorResult(p: ParsedTx, code: TxCode, inner: boolean, feeCharged: bigint): xdr.TransactionResult {
  const mk = (c: TxCode) => (xdr.TransactionResultResult[c] as () => xdr.TransactionResultResult)();
  if (p.feeBump && inner) {
    const innerRes = new xdr.InnerTransactionResult({
      feeCharged: 0n,
      result: (xdr.InnerTransactionResultResult[code as keyof typeof xdr.InnerTransactionResultResult] as () => xdr.InnerTransactionResultResult)(),
      ext: xdr.InnerTransactionResultExt.v0(),
    });
    return new xdr.TransactionResult({
      feeCharged,
      result: xdr.TransactionResultResult.txFeeBumpInnerFailed(new xdr.InnerTransactionResultPair({ transactionHash: Buffer.from(p.innerHash!, 'hex'), result: innerRes })),
      ext: xdr.TransactionResultExt.v0(),
    });
  }
  return new xdr.TransactionResult({ feeCharged, result: mk(code), ext: xdr.TransactionResultExt.v0() });
}
