/**
 * GET /settlements/{transaction}: a journaled settlement, public and limited to what the chain
 * itself publishes (openapi.yaml, docs/OPERATIONS.md). No payload, resource or Idempotency-Key.
 */
import type { Context, Middleware } from 'koa';
import { defaultMessage } from '../codes.ts';
import type { SettlementJournal } from '../journal/journal.ts';
import type { SettlementRecord } from '../journal/types.ts';

const TX_HASH = /^[0-9a-f]{64}$/;

export function publicRecord(record: SettlementRecord): Record<string, unknown> {
  return {
    transaction: record.transaction,
    network: record.network,
    state: record.state,
    payer: record.payer,
    payTo: record.payTo,
    asset: record.asset,
    amount: record.amount,
    submitter: record.submitter,
    feeStroops: record.feeStroops.toString(),
    validUntil: record.validUntil,
    history: record.history.map((h) => ({ state: h.state, at: new Date(h.at).toISOString() })),
  };
}

export function settlementHandler(journal: SettlementJournal | undefined): Middleware {
  return async (ctx: Context) => {
    // Without a journal (an embedding that mounts none) nothing is journaled: every hash is unknown.
    const transaction = ctx.path.slice(ctx.path.lastIndexOf('/') + 1).toLowerCase();
    const record = journal && TX_HASH.test(transaction) ? await journal.store.getByTransaction(transaction) : null;
    if (!record) {
      ctx.status = 404;
      ctx.body = { error: { code: 'svc_settlement_not_found', reason: defaultMessage('svc_settlement_not_found') } };
      return;
    }
    ctx.status = 200;
    ctx.body = publicRecord(record);
  };
}
