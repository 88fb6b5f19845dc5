/**
 * The one port through which the scheme and the buyer-side client talk to the chain. It is as
 * small as the payment path needs; the devnet and a real Soroban RPC are interchangeable behind it.
 * `createSdkRpc` implements it over @stellar/stellar-sdk's `rpc.Server`.
 */
import { Keypair, rpc, xdr, type FeeBumpTransaction, type Transaction } from '@stellar/stellar-sdk';
import { Reader } from '@stellar/js-xdr';
import { keepAliveClient, type PostClient } from './rpc-transport.ts';

export interface LedgerStamp {
  sequence: number;
  /** Unix seconds. */
  closeTime: number;
}

export type Simulation =
  | {
      ok: true;
      latestLedger: number;
      minResourceFee: bigint;
      transactionData: xdr.SorobanTransactionData;
      events: xdr.DiagnosticEvent[];
      /** Recorded (record mode) or echoed (enforce mode) authorization entries of results[0]. */
      auth: xdr.SorobanAuthorizationEntry[];
    }
  | {
      ok: false;
      latestLedger: number;
      error: string;
      /** The archived entries the invocation reads: the RPC answered a restore preamble for them. */
      archived?: xdr.LedgerKey[];
    };

export interface Submission {
  status: 'PENDING' | 'DUPLICATE' | 'TRY_AGAIN_LATER' | 'ERROR';
  hash: string;
  /** Result code of errorResultXdr on ERROR, as the SDK's XDR names it (e.g. txBadSeq). */
  resultCode?: string;
}

export interface TransactionStatus {
  status: 'SUCCESS' | 'FAILED' | 'NOT_FOUND';
  latestLedger: number;
  /** Unix seconds of the latest ledger the RPC knows. */
  latestLedgerCloseTime: number;
  ledger?: number;
  /** Result code of resultXdr when known (txSUCCESS, txFAILED, txFEE_BUMP_INNER_FAILED…). */
  resultCode?: string;
  feeCharged?: bigint;
}

export type SimulationAuthMode = 'enforce' | 'record';

/**
 * What one closed ledger charged its Soroban transactions for inclusion, per operation (the
 * transaction set's Soroban phase): the ledger's base fee, or more when the ledger was full and
 * the network surge-priced its Soroban lane. Null when its set names no such fee (an older set
 * without a Soroban phase, or one leaving each transaction to pay its own bid).
 */
export interface LaneFee {
  sequence: number;
  baseFee: bigint;
  sorobanFee: bigint | null;
}

export interface ChainRpc {
  getLatestLedger(): Promise<LedgerStamp>;
  /** The latest ledger and the one `ledgers` before it (or the oldest the RPC still has). */
  getLedgerSpan(ledgers: number): Promise<{ older: LedgerStamp; latest: LedgerStamp }>;
  /** The account's current sequence number (the next transaction uses this + 1). */
  getAccountSequence(address: string): Promise<bigint>;
  /**
   * `tx` as a transaction, or as the base64 envelope a buyer sent: that text goes to the RPC as it
   * came, so verify does not encode again what it has just decoded.
   */
  simulate(tx: Transaction | string, authMode?: SimulationAuthMode): Promise<Simulation>;
  /** Submits a signed envelope (a transaction, or its base64 XDR as signed). */
  send(tx: Transaction | FeeBumpTransaction | string): Promise<Submission>;
  getTransaction(hash: string): Promise<TransactionStatus>;
  /**
   * The Soroban lane fees of the latest `ledgers` ledgers (getLedgers' close meta), oldest first,
   * leaving out those up to `after` (already read); fewer on a chain that young.
   */
  getSorobanLaneFees(ledgers: number, after?: number): Promise<LaneFee[]>;
}

/** An RPC call that failed at transport or JSON-RPC level (not a simulation/transaction outcome). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    detail: string,
  ) {
    super(`RPC ${method} failed: ${detail}`);
    this.name = 'RpcError';
  }
}

/** The RPC answered, and the account does not exist on the ledger (not a fault of the RPC). */
export class AccountMissingError extends Error {
  constructor(readonly address: string) {
    super(`Account not found on the ledger: ${address}`);
    this.name = 'AccountMissingError';
  }
}

/** A one-line description of anything thrown (Error, JSON-RPC error object, other). */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object') {
    const { code, message } = err as { code?: unknown; message?: unknown };
    if (message !== undefined) return `${scalarText(message)}${code !== undefined ? ` (code ${scalarText(code)})` : ''}`;
    try {
      return JSON.stringify(err).slice(0, 300);
    } catch {
      /* fall through */
    }
  }
  return String(err);
}

/** Runs one RPC call; a call that outlives `timeoutMs` is abandoned as an RpcError. */
async function callWithin<T>(timeoutMs: number, method: string, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([run(), timeout]);
  } catch (err) {
    throw new RpcError(method, describeError(err));
  } finally {
    clearTimeout(timer);
  }
}

/** Name of a TransactionResult's result arm as the SDK's XDR names it (txSuccess, txBadSeq…); undefined when undecodable. */
export function resultCodeOf(resultXdr: string | undefined): string | undefined {
  if (!resultXdr) return undefined;
  try {
    const result = xdr.TransactionResult.fromXDR(resultXdr, 'base64') as unknown as {
      result: { type?: unknown; switch?: () => { name: string } };
    };
    const arm = result.result;
    if (typeof arm.type === 'string') return arm.type;
    if (typeof arm.switch === 'function') return arm.switch().name;
  } catch {
    /* undecodable: leave it out */
  }
  return undefined;
}

function feeChargedOf(resultXdr: string | undefined): bigint | undefined {
  if (!resultXdr) return undefined;
  try {
    const result = xdr.TransactionResult.fromXDR(resultXdr, 'base64') as unknown as { feeCharged: unknown };
    return BigInt(String(result.feeCharged));
  } catch {
    return undefined;
  }
}

/** Host errors carry a long event log; the first line names the error. */
export function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? text;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

const toNumber = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0));

export interface SdkRpcOptions {
  url: string;
  /** Per-request timeout; the scheme must never hang on a silent RPC. Default 10 s. */
  timeoutMs?: number;
}

/**
 * An `rpc.Server` whose JSON-RPC calls go over keep-alive node:http (rpc-transport.ts): far cheaper
 * than the SDK's own client, whose first call also loads Node's fetch, about 0.1 CPU-s of svc's
 * start-up when readiness's first round made it (docs/OPERATIONS.md "Startup"). rpc.Server ignores
 * its `timeout` option; the client honours `httpClient.defaults.timeout`.
 */
export function sdkServer(url: string, timeoutMs: number): rpc.Server {
  const server = new rpc.Server(url, { allowHttp: url.startsWith('http://') });
  (server.httpClient.defaults as { timeout?: number }).timeout = timeoutMs;
  Reflect.set(server, 'httpClient', keepAliveClient(server.httpClient as unknown as PostClient, timeoutMs));
  return server;
}

/**
 * `ChainRpc` over `rpc.Server`. The raw (`_`-prefixed) calls are used where the parsed variant
 * would decode ledger header/meta XDR we never read.
 */
export function createSdkRpc({ url, timeoutMs = 10_000 }: SdkRpcOptions): ChainRpc {
  const server = sdkServer(url, timeoutMs);
  const call = <T>(method: string, run: () => Promise<T>) => callWithin(timeoutMs + 250, method, run);
  /** Up to `limit` ledgers from `start`; on a young chain (or a short retention window) from where history begins. */
  const ledgersFrom = async (start: number, limit: number) => {
    const page = (from: number) => call('getLedgers', () => server._getLedgers({ startLedger: from, pagination: { limit } }));
    try {
      return (await page(Math.max(1, start))).ledgers;
    } catch (err) {
      const health = await call('getHealth', () => server.getHealth()).catch(() => {
        throw err;
      });
      return (await page(Math.max(health.oldestLedger, start))).ledgers;
    }
  };
  return {
    async getLatestLedger() {
      const r = await call('getLatestLedger', () => server._getLatestLedger());
      return { sequence: r.sequence, closeTime: toNumber(r.closeTime) };
    },
    async getLedgerSpan(ledgers) {
      const latest = await call('getLatestLedger', () => server._getLatestLedger());
      const older = (await ledgersFrom(latest.sequence - ledgers, 1))[0];
      if (!older) throw new RpcError('getLedgers', 'returned no ledger');
      return {
        older: { sequence: older.sequence, closeTime: toNumber(older.ledgerCloseTime) },
        latest: { sequence: latest.sequence, closeTime: toNumber(latest.closeTime) },
      };
    },
    async getSorobanLaneFees(ledgers, after = 0) {
      const latest = (await call('getLatestLedger', () => server._getLatestLedger())).sequence;
      const start = Math.max(latest - ledgers + 1, after + 1);
      if (start > latest) return [];
      const page = await ledgersFrom(start, latest - start + 1);
      return page.filter((l) => l.sequence > after && l.sequence <= latest).map((l) => laneFeeOf(l.sequence, l.metadataXdr));
    },
    async getAccountSequence(address) {
      // server.getAccount turns every failure, an RPC fault included, into "Account not found";
      // reading the entry ourselves keeps a fault named as the RPC fault it is.
      const key = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(address).xdrPublicKey() }));
      const r = await call('getLedgerEntries', () => server.getLedgerEntries(key));
      const entry = r.entries[0];
      if (!entry) throw new AccountMissingError(address);
      if (entry.val.type !== 'account') throw new RpcError('getLedgerEntries', `returned a ${entry.val.type} entry for an account key`);
      return BigInt(entry.val.value.seqNum.toString());
    },
    async simulate(tx, authMode) {
      const transaction = typeof tx === 'string' ? tx : tx.toXDR();
      const params = { transaction, authMode, useUpgradedAuth: true };
      // Parsed inside the call, as the SDK's client did: an answer that does not decode is the RPC's fault.
      return call('simulateTransaction', async () =>
        parseSimulation(await postJsonRpc<RawSimulation>(server, 'simulateTransaction', params)),
      );
    },
    async send(tx) {
      const transaction = typeof tx === 'string' ? tx : tx.toXDR();
      const r = await call('sendTransaction', () => postJsonRpc<RawSendTransaction>(server, 'sendTransaction', { transaction }));
      return { status: r.status, hash: r.hash, resultCode: resultCodeOf(r.errorResultXdr) };
    },
    async getTransaction(hash) {
      const r = await call('getTransaction', () => server._getTransaction(hash));
      const base = {
        status: r.status as TransactionStatus['status'],
        latestLedger: r.latestLedger,
        latestLedgerCloseTime: toNumber(r.latestLedgerCloseTime),
      };
      if (base.status === 'NOT_FOUND') return base;
      return { ...base, ledger: r.ledger, resultCode: resultCodeOf(r.resultXdr), feeCharged: feeChargedOf(r.resultXdr) };
    },
  };
}

/**
 * One JSON-RPC call through rpc.Server's HTTP client (rpc-transport.ts). As the SDK's own calls
 * do, an answer carrying `error` throws that error object (describeError names it).
 */
async function postJsonRpc<T>(server: rpc.Server, method: string, params: object): Promise<T> {
  const response = await server.httpClient.post(server.serverURL.toString(), { jsonrpc: '2.0', id: 1, method, params });
  const data = response.data as { error?: unknown; result?: T } | undefined;
  if (data && Object.hasOwn(data, 'error')) throw data.error;
  return data?.result as T;
}

/** sendTransaction's answer as the RPC sends it (the fields the payment path reads). */
interface RawSendTransaction {
  status: Submission['status'];
  hash: string;
  errorResultXdr?: string;
}

/** simulateTransaction's answer as the RPC sends it (base64 XDR strings). */
interface RawSimulation {
  latestLedger: number;
  error?: unknown;
  transactionData?: string;
  minResourceFee?: string;
  events?: string[];
  results?: Array<{ auth?: string[]; xdr?: string }>;
  restorePreamble?: { transactionData?: string };
}

/**
 * The answer as a Simulation: the parts the payment path reads (fee, events, footprint,
 * authorization entries). The state changes are not decoded: nothing reads them, and decoding
 * them cost twice what the rest did.
 */
export function parseSimulation(sim: RawSimulation): Simulation {
  if (!sim || typeof sim !== 'object') throw new Error('simulateTransaction answered no result');
  if (typeof sim.error === 'string') return { ok: false, latestLedger: sim.latestLedger, error: sim.error };
  if (typeof sim.transactionData !== 'string' || sim.transactionData === '') {
    return { ok: false, latestLedger: sim.latestLedger, error: 'unrecognised simulation response' };
  }
  if (sim.restorePreamble?.transactionData) {
    const restore = xdr.SorobanTransactionData.fromXDR(sim.restorePreamble.transactionData, 'base64');
    const archived = restore.resources.footprint.readWrite;
    return {
      ok: false,
      latestLedger: sim.latestLedger,
      error: `${archived.length} archived ledger ${archived.length === 1 ? 'entry' : 'entries'} must be restored first`,
      archived,
    };
  }
  return {
    ok: true,
    latestLedger: sim.latestLedger,
    minResourceFee: BigInt(sim.minResourceFee ?? NaN),
    transactionData: xdr.SorobanTransactionData.fromXDR(sim.transactionData, 'base64'),
    events: (sim.events ?? []).map((event) => xdr.DiagnosticEvent.fromXDR(event, 'base64')),
    auth: (sim.results?.[0]?.auth ?? []).map((entry) => xdr.SorobanAuthorizationEntry.fromXDR(entry, 'base64')),
  };
}

/** The decoded shape of a generalized transaction set's phases, as far as the lane fee needs it. */
interface RawPhases {
  v1TxSet?: {
    phases: Array<{
      parallelTxsComponent?: { baseFee: bigint | null };
      v0Components?: Array<{ txsMaybeDiscountedFee?: { baseFee: bigint | null } }>;
    }>;
  };
}

/**
 * The Soroban lane fee of a ledger, from its close meta (base64 LedgerCloseMeta): the base fee of
 * the transaction set's Soroban phase (the second; a parallel component in protocol 23 and later,
 * a component list before), and the header's base fee. Only the meta's head is decoded (its
 * header and transaction set): the transactions' processing after it, most of a busy ledger's
 * meta, is never read.
 */
export function laneFeeOf(sequence: number, metadataXdr: string): LaneFee {
  try {
    const reader = new Reader(Buffer.from(metadataXdr, 'base64'));
    const version = reader.readInt32('LedgerCloseMeta');
    if (version !== 0) xdr.LedgerCloseMetaExt.schema._read(reader, 'LedgerCloseMeta.ext');
    const header = xdr.LedgerHeaderHistoryEntry.schema._read(reader, 'LedgerCloseMeta.ledgerHeader');
    const baseFee = BigInt(header.header.baseFee);
    if (version === 0) return { sequence, baseFee, sorobanFee: null };
    const set = xdr.GeneralizedTransactionSet.schema._read(reader, 'LedgerCloseMeta.txSet') as RawPhases;
    const phase = set.v1TxSet?.phases[1];
    const fee =
      phase?.parallelTxsComponent?.baseFee ?? phase?.v0Components?.map((c) => c.txsMaybeDiscountedFee?.baseFee).find((f) => f != null);
    return { sequence, baseFee, sorobanFee: fee ?? null };
  } catch (err) {
    throw new RpcError('getLedgers', `answered ledger ${sequence} with close meta that does not decode: ${describeError(err)}`);
  }
}

/** A primitive as text; an object as JSON (never "[object Object]"). */
function scalarText(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      return 'an object';
    }
  }
  return String(value);
}
