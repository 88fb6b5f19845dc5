/**
 * JSON-RPC 2.0 over HTTP(S) for the devnet, answering like stellar-rpc: result shapes per
 * docs/DEVNET.md, -32700/-32600/-32601/-32602/-32603 errors, plus the
 * friendbot endpoint. Fault switches are consulted first so tests can make any method fail.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { xdr } from '@stellar/stellar-sdk';
import type { Faults } from './faults.ts';
import { RpcParamError, type DevnetLedger } from './ledger.ts';
import { PROTOCOL_VERSION, type LedgerRecord } from './records.ts';
import { BASE_FEE } from './fees.ts';
import type { RpcMethod } from './types.ts';

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const MAX_LEDGER_KEYS = 200;
const MAX_LEDGERS_PAGE = 200;

interface RpcError {
  code: number;
  message: string;
}

type Handler = (params: unknown) => unknown;

export interface RpcContext {
  ledger: DevnetLedger;
  faults: Faults;
  friendbotUrl: () => string;
  /** Connections held open by the `timeout` fault, released on stop. */
  held: Set<ServerResponse>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function noParams(params: unknown): void {
  if (params === undefined || params === null) return;
  if (Array.isArray(params) && params.length === 0) return;
  if (isObject(params) && Object.keys(params).length === 0) return;
  throw new RpcParamError('invalid parameters: this method takes no parameters');
}

function objectParams(params: unknown): Record<string, unknown> {
  if (!isObject(params)) throw new RpcParamError('invalid parameters: expected a JSON object');
  return params;
}

export function makeHandlers(ctx: RpcContext): Record<RpcMethod, Handler> {
  const { ledger, faults } = ctx;
  /** The ledger the RPC reports as latest (lagged by the fault switch). */
  const reported = (): LedgerRecord => {
    const i = Math.max(0, ledger.ledgers.length - 1 - faults.lag);
    return ledger.ledgers[i]!;
  };
  const oldest = () => ledger.ledgers[0]!;
  /** stellar-rpc's FeeDistribution of `fees` (nearest-rank percentiles); the network minimum throughout when empty. */
  const feeDistribution = (fees: number[], ledgerCount: number) => {
    const sorted = fees.map((f) => Math.floor(f)).sort((a, b) => a - b);
    if (sorted.length === 0) sorted.push(BASE_FEE);
    const at = (p: number) => String(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]);
    const counts = new Map<number, number>();
    for (const f of sorted) counts.set(f, (counts.get(f) ?? 0) + 1);
    const mode = [...counts].reduce((best, c) => (c[1] > best[1] ? c : best))[0];
    const percentiles = Object.fromEntries([10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99].map((p) => [`p${p}`, at(p)]));
    return {
      max: String(sorted[sorted.length - 1]),
      min: String(sorted[0]),
      mode: String(mode),
      ...percentiles,
      transactionCount: String(fees.length),
      ledgerCount,
    };
  };

  return {
    getHealth: (params) => {
      noParams(params);
      const l = reported();
      return {
        status: 'healthy',
        latestLedger: l.sequence,
        oldestLedger: oldest().sequence,
        ledgerRetentionWindow: ledger.retention,
        latestLedgerCloseTime: l.closeTime,
      };
    },
    getNetwork: (params) => {
      noParams(params);
      return { friendbotUrl: ctx.friendbotUrl(), passphrase: ledger.networkPassphrase, protocolVersion: PROTOCOL_VERSION };
    },
    getLatestLedger: (params) => {
      noParams(params);
      const l = reported();
      return {
        id: l.hash,
        sequence: l.sequence,
        protocolVersion: PROTOCOL_VERSION,
        closeTime: String(l.closeTime),
        headerXdr: l.headerXdr,
        metadataXdr: l.metadataXdr,
      };
    },
    getLedgers: (params) => {
      const p = params === undefined || params === null ? {} : objectParams(params);
      const latest = reported();
      const first = oldest();
      const pagination = p.pagination === undefined ? {} : objectParams(p.pagination);
      const limit = pagination.limit === undefined ? 5 : Number(pagination.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LEDGERS_PAGE) {
        throw new RpcParamError(`limit must be between 1 and ${MAX_LEDGERS_PAGE}`);
      }
      let start: number;
      if (pagination.cursor !== undefined) {
        start = Number(pagination.cursor) + 1;
        if (!Number.isInteger(start)) throw new RpcParamError('invalid cursor');
        if (p.startLedger !== undefined) throw new RpcParamError('startLedger and cursor cannot both be set');
      } else {
        start = Number(p.startLedger);
        if (!Number.isInteger(start) || start < first.sequence || start > latest.sequence) {
          throw new RpcParamError(
            `start ledger must be between the oldest ledger: ${first.sequence} and the latest ledger: ${latest.sequence} for this rpc instance.`,
          );
        }
      }
      const page = ledger.ledgers.filter((l) => l.sequence >= start && l.sequence <= latest.sequence).slice(0, limit);
      const last = page[page.length - 1];
      return {
        ledgers: page.map((l) => ({
          hash: l.hash,
          sequence: l.sequence,
          ledgerCloseTime: String(l.closeTime),
          headerXdr: l.historyEntryXdr,
          metadataXdr: l.metadataXdr,
        })),
        latestLedger: latest.sequence,
        latestLedgerCloseTime: latest.closeTime,
        oldestLedger: first.sequence,
        oldestLedgerCloseTime: first.closeTime,
        cursor: String(last ? last.sequence : start - 1),
      };
    },
    getLedgerEntries: (params) => {
      const p = objectParams(params);
      if (!Array.isArray(p.keys) || p.keys.length === 0) throw new RpcParamError('keys must be a non-empty array of base64 LedgerKey');
      if (p.keys.length > MAX_LEDGER_KEYS)
        throw new RpcParamError(`key count (${p.keys.length}) exceeds maximum supported (${MAX_LEDGER_KEYS})`);
      const entries: unknown[] = [];
      p.keys.forEach((k: unknown, i: number) => {
        let key: xdr.LedgerKey;
        try {
          if (typeof k !== 'string') throw new Error('not a string');
          key = xdr.LedgerKey.fromXdr(k, 'base64');
        } catch {
          throw new RpcParamError(`cannot unmarshal key value ${JSON.stringify(k)} at index ${i}`);
        }
        if (key.type === 'ttl') throw new RpcParamError(`ledger ttl entries cannot be queried directly. Key: ${k}`);
        const e = ledger.state.get(key);
        if (!e) return;
        if (
          e.liveUntil !== undefined &&
          e.liveUntil < ledger.latest().sequence &&
          key.type === 'contractData' &&
          key.contractData.durability === xdr.ContractDataDurability.temporary
        )
          return;
        entries.push({
          key: k,
          xdr: e.data.toXdr('base64'),
          lastModifiedLedgerSeq: e.lastModified,
          ...(e.liveUntil !== undefined ? { liveUntilLedgerSeq: e.liveUntil } : {}),
        });
      });
      return { entries, latestLedger: ledger.latest().sequence };
    },
    getFeeStats: (params) => {
      noParams(params);
      const soroban = ledger.sorobanFeeStats();
      return {
        sorobanInclusionFee: feeDistribution(soroban.fees, soroban.ledgerCount),
        // Classic transactions have no lane of their own here: the minimum.
        inclusionFee: feeDistribution([], Math.min(10, soroban.ledgerCount)),
        latestLedger: ledger.latest().sequence,
      };
    },
    simulateTransaction: (params) => {
      const p = objectParams(params);
      const authMode = p.authMode;
      if (
        authMode !== undefined &&
        authMode !== '' &&
        authMode !== 'enforce' &&
        authMode !== 'record' &&
        authMode !== 'record_allow_nonroot'
      ) {
        throw new RpcParamError(`invalid authMode: ${JSON.stringify(authMode)}`);
      }
      if (p.useUpgradedAuth !== undefined && typeof p.useUpgradedAuth !== 'boolean')
        throw new RpcParamError('useUpgradedAuth must be a boolean');
      return ledger.simulate(p.transaction as string, {
        authMode: authMode === '' || authMode === undefined ? undefined : authMode,
        useUpgradedAuth: p.useUpgradedAuth === true,
      });
    },
    sendTransaction: (params) => {
      const p = objectParams(params);
      const parsed = ledger.parse(p.transaction as string); // validates the XDR first (-32602)
      const latest = ledger.latest();
      const base = { hash: parsed.hash, latestLedger: latest.sequence, latestLedgerCloseTime: String(latest.closeTime) };
      const forced = faults.takeSendStatus();
      if (forced === 'TRY_AGAIN_LATER') return { status: 'TRY_AGAIN_LATER', ...base };
      if (forced === 'ERROR') {
        const err = new xdr.TransactionResult({
          feeCharged: 0n,
          result: xdr.TransactionResultResult.txInternalError(),
          ext: xdr.TransactionResultExt.v0(),
        });
        return { status: 'ERROR', ...base, errorResultXdr: err.toXdr('base64'), diagnosticEventsXdr: [] };
      }
      const out = ledger.submit(p.transaction as string, { drop: faults.takeDrop(), parsed });
      if (out.status === 'ERROR')
        return { status: 'ERROR', ...base, errorResultXdr: out.errorResult!.toXdr('base64'), diagnosticEventsXdr: [] };
      return { status: out.status, ...base };
    },
    getTransaction: (params) => {
      const p = objectParams(params);
      const h = p.hash;
      if (typeof h !== 'string') throw new RpcParamError('hash must be a hex string');
      if (h.length !== 64) throw new RpcParamError(`unexpected hash length (${h.length})`);
      if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new RpcParamError('hash must be hex');
      const latest = ledger.latest();
      const first = oldest();
      const base = {
        txHash: h.toLowerCase(),
        latestLedger: latest.sequence,
        latestLedgerCloseTime: String(latest.closeTime),
        oldestLedger: first.sequence,
        oldestLedgerCloseTime: String(first.closeTime),
      };
      const rec = ledger.txs.get(h.toLowerCase());
      if (!rec) return { status: 'NOT_FOUND', ...base };
      return {
        status: rec.status,
        ...base,
        applicationOrder: rec.applicationOrder,
        feeBump: rec.feeBump,
        envelopeXdr: rec.envelopeXdr,
        resultXdr: rec.resultXdr,
        resultMetaXdr: rec.resultMetaXdr,
        ledger: rec.ledger,
        createdAt: String(rec.createdAt),
        diagnosticEventsXdr: rec.diagnosticEventsXdr,
        events: { transactionEventsXdr: rec.transactionEventsXdr, contractEventsXdr: rec.contractEventsXdr },
      };
    },
  };
}

// ---- HTTP framing ------------------------------------------------------------------------

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Past the limit keep draining (so the 413 can be delivered) but stop buffering.
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

const rpcError = (id: unknown, error: RpcError) => ({ jsonrpc: '2.0', id: id ?? null, error });

/** Answer one JSON-RPC request object; `undefined` means "hold the connection" (timeout fault). */
async function answerOne(ctx: RpcContext, handlers: Record<RpcMethod, Handler>, req: unknown): Promise<unknown> {
  if (!isObject(req) || req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
    return rpcError(isObject(req) ? req.id : null, { code: -32600, message: 'invalid request' });
  }
  const { id, method } = req;
  if (!Object.hasOwn(handlers, method)) return rpcError(id, { code: -32601, message: `method not found: ${method}` });
  const fault = ctx.faults.takeMethodFault(method);
  if (fault?.kind === 'timeout') return undefined;
  if (fault?.kind === 'httpError') return { httpStatus: fault.status };
  if (fault?.kind === 'rpcError') return rpcError(id, { code: fault.code ?? -32603, message: fault.message ?? 'injected fault' });
  if (fault?.kind === 'garbage') return { jsonrpc: '2.0', id: id ?? null, result: fault.result ?? null };
  if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
  try {
    const result = handlers[method as RpcMethod](req.params);
    return { jsonrpc: '2.0', id: id ?? null, result };
  } catch (e) {
    if (e instanceof RpcParamError) return rpcError(id, { code: e.code, message: e.message });
    // Never leak internals (or anything secret): a generic internal error.
    return rpcError(id, { code: -32603, message: `internal error: ${e instanceof Error ? e.message.split('\n')[0] : 'unknown'}` });
  }
}

export function makeRequestListener(ctx: RpcContext, fund: (addr: string, usdc: bigint | undefined) => Promise<void>) {
  const handlers = makeHandlers(ctx);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/friendbot') {
        if (req.method !== 'GET' && req.method !== 'POST') return send(res, 405, { error: 'use GET /friendbot?addr=G…' });
        const addr = url.searchParams.get('addr') ?? '';
        const usdcRaw = url.searchParams.get('usdc');
        if (usdcRaw !== null && !/^\d{1,19}$/.test(usdcRaw))
          return send(res, 400, { error: 'usdc must be a non-negative integer in base units' });
        try {
          await fund(addr, usdcRaw === null ? undefined : BigInt(usdcRaw));
        } catch (e) {
          return send(res, 400, { error: e instanceof Error ? e.message : 'invalid request' });
        }
        return send(res, 200, { successful: true, account: addr, ledger: ctx.ledger.latest().sequence });
      }
      if (url.pathname !== '/' && url.pathname !== '/rpc')
        return send(res, 404, { error: 'not found: JSON-RPC is served at POST / and POST /rpc' });
      if (req.method !== 'POST') return send(res, 405, { error: 'JSON-RPC requires POST' });
      const body = await readBody(req);
      if (body === null) return send(res, 413, rpcError(null, { code: -32600, message: 'request body too large' }));
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return send(res, 200, rpcError(null, { code: -32700, message: 'parse error' }));
      }
      if (Array.isArray(parsed)) {
        if (parsed.length === 0) return send(res, 200, rpcError(null, { code: -32600, message: 'empty batch' }));
        const answers = [];
        for (const one of parsed) {
          const a = await answerOne(ctx, handlers, one);
          answers.push(
            a === undefined || (isObject(a) && 'httpStatus' in a) ? rpcError(null, { code: -32603, message: 'injected fault' }) : a,
          );
        }
        return send(res, 200, answers);
      }
      const answer = await answerOne(ctx, handlers, parsed);
      if (answer === undefined) {
        ctx.held.add(res);
        res.on('close', () => ctx.held.delete(res));
        return;
      }
      if (isObject(answer) && 'httpStatus' in answer) return send(res, answer.httpStatus as number, 'injected HTTP failure');
      return send(res, 200, answer);
    } catch {
      send(res, 500, rpcError(null, { code: -32603, message: 'internal error' }));
    }
  };
}
