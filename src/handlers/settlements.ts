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
    // The path segment as the caller meant it (percent-decoded), in either letter case.
    const raw = safeDecode(ctx.path.slice(ctx.path.lastIndexOf('/') + 1));
    const transaction = raw.toLowerCase();
    // Not a hash at all: the caller's mistake, told as such rather than as an unknown settlement.
    if (!TX_HASH.test(transaction)) {
      const shown = JSON.stringify(raw.slice(0, 80));
      throw new HttpError(
        400,
        'svc_invalid_transaction_hash',
        `The transaction hash ${shown} is not 64 hexadecimal characters; no settlement has it.`,
      );
    }
    const record = journal ? await journal.store.getByTransaction(transaction) : null;
    if (!record) throw new HttpError(404, 'svc_settlement_not_found', defaultMessage('svc_settlement_not_found'));
    ctx.status = 200;
    ctx.body = publicRecord(record);
  };
}

/** A path segment as the caller meant it (percent-decoded when it decodes). */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
