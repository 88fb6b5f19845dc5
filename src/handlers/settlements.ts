/**
 * GET /settlements/{transaction}: a journaled settlement, public and limited to what the chain
 * itself publishes (openapi.yaml, docs/OPERATIONS.md). No payload, resource or Idempotency-Key.
 */
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import type { components } from '../generated/openapi.ts';
import type { SettlementJournal } from '../journal/journal.ts';
import type { SettlementRecord } from '../journal/types.ts';
import { defaultMessage } from '../codes.ts';

const TX_HASH = /^[0-9a-f]{64}$/;

export function publicRecord(record: SettlementRecord): components['schemas']['SettlementRecord'] {
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

/** `journal` null: an embedding that mounts none journals nothing, so every hash is unknown. */
export function settlementHandler(journal: SettlementJournal | null): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const transaction = ctx.path.slice(ctx.path.lastIndexOf('/') + 1).toLowerCase();
    const record = journal && TX_HASH.test(transaction) ? await journal.store.getByTransaction(transaction) : null;
    if (!record) throw new HttpError(404, 'svc_settlement_not_found', defaultMessage('svc_settlement_not_found'));
    ctx.status = 200;
    ctx.body = publicRecord(record);
  };
}
