/**
 * The quality signals on PostgreSQL, as sqlite/quality.ts keeps them on SQLite (../quality.ts
 * explains the tables). Every instance writes them in the listing's write transaction, under the
 * listing's advisory lock (store.ts), so concurrent settlements of one listing on several
 * instances are counted one after the other.
 */
import { PRUNE_BATCH } from '../listing.ts';
import { qualityDaysOf, windowStartDay, windowTotals, withPayment, type PaymentFacts } from '../quality.ts';
import type pg from 'pg';

/** A connection or a transaction's client (as queries.ts Db). */
type Db = Pick<pg.PoolClient, 'query'>;

export const QUALITY_MIGRATION = `
  CREATE TABLE listing_calls (
    listing_id BIGINT NOT NULL,
    day INTEGER NOT NULL,
    calls BIGINT NOT NULL,
    payers BIGINT NOT NULL,
    PRIMARY KEY (listing_id, day)
  );
  CREATE INDEX listing_calls_by_day ON listing_calls (day);
  CREATE TABLE listing_payers (
    listing_id BIGINT NOT NULL,
    payer TEXT COLLATE "C" NOT NULL,
    last_day INTEGER NOT NULL,
    PRIMARY KEY (listing_id, payer)
  );
  CREATE INDEX listing_payers_by_day ON listing_payers (last_day);
  CREATE TABLE listing_payments (payment_id TEXT COLLATE "C" PRIMARY KEY, day INTEGER NOT NULL);
  CREATE INDEX listing_payments_by_day ON listing_payments (day);`;

/**
 * Migration 6 (sqlite/migrations.ts migrateToAcceptedAssets): accepted entries' asset and amount
 * (digits without leading zeros) from their canonical JSON, and the list index's asset keys,
 * counted in their blocks as a write counts them.
 */
export const ACCEPTED_ASSETS_MIGRATION = `
  ALTER TABLE listing_accepts ADD COLUMN asset TEXT COLLATE "C", ADD COLUMN amount TEXT COLLATE "C";
  UPDATE listing_accepts SET
    asset = CASE WHEN jsonb_typeof(terms_key::jsonb -> 'asset') = 'string' THEN terms_key::jsonb ->> 'asset' END,
    amount = CASE WHEN jsonb_typeof(terms_key::jsonb -> 'amount') = 'string' AND (terms_key::jsonb ->> 'amount') ~ '^[0-9]+$'
               THEN coalesce(nullif(ltrim(terms_key::jsonb ->> 'amount', '0'), ''), '0') END;
  CREATE INDEX listing_accepts_by_asset ON listing_accepts (asset, listing_id);
  DO $$
  DECLARE r RECORD;
  BEGIN
    FOR r IN SELECT DISTINCT a.listing_id, a.asset, l.last_updated FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
             WHERE a.asset IS NOT NULL ORDER BY a.listing_id LOOP
      INSERT INTO listing_keys (kind, value, listing_id, last_updated) VALUES ('asset', r.asset, r.listing_id, r.last_updated)
        ON CONFLICT DO NOTHING;
      IF FOUND THEN
        INSERT INTO listing_counts (kind, value, n) VALUES ('asset', r.asset, 1)
          ON CONFLICT (kind, value) DO UPDATE SET n = listing_counts.n + 1;
        PERFORM catalog_block_add('asset', r.asset, r.last_updated, r.listing_id);
      END IF;
    END LOOP;
  END $$;`;

/**
 * Catalog migration 43 (sqlite/quality.ts migrateToPaymentPayers): a payer's last day is read from the payments kept,
 * which name their listing and payer (a payment without an id is kept with id NULL when it names a payer); each
 * `listing_payers` row becomes such a row on its payer's last day, and that table goes. Run again on a catalog set back
 * to an earlier version: moved already.
 */
export const PAYMENT_PAYERS_MIGRATION = `
  DO $$ BEGIN
    IF to_regclass('listing_payers') IS NOT NULL THEN
      ALTER TABLE listing_payments DROP CONSTRAINT listing_payments_pkey;
      ALTER TABLE listing_payments ALTER COLUMN payment_id DROP NOT NULL, ADD COLUMN listing_id BIGINT,
        ADD COLUMN payer TEXT COLLATE "C", ADD CONSTRAINT listing_payments_payment_id_key UNIQUE (payment_id);
      INSERT INTO listing_payments (day, listing_id, payer) SELECT last_day, listing_id, payer FROM listing_payers;
      DROP TABLE listing_payers;
      CREATE INDEX listing_payments_by_payer ON listing_payments (listing_id, payer, day) WHERE listing_id IS NOT NULL;
    END IF;
  END $$;`;

/**
 * Catalog migration 44 (sqlite/quality.ts migrateToQualityDays): a listing's calls and payers per day move from
 * `listing_calls` onto its row, `quality_days` (../quality.ts), and that table goes. Run again on a catalog set back to
 * an earlier version: moved already.
 */
export const QUALITY_DAYS_MIGRATION = `
  ALTER TABLE listings ADD COLUMN IF NOT EXISTS quality_days JSONB;
  DO $$ BEGIN
    IF to_regclass('listing_calls') IS NOT NULL THEN
      UPDATE listings l SET quality_days = c.days FROM (
        SELECT listing_id, jsonb_agg(jsonb_build_array(day, calls, payers) ORDER BY day) AS days FROM listing_calls GROUP BY listing_id
      ) c WHERE l.id = c.listing_id;
      DROP TABLE listing_calls;
    END IF;
  END $$;`;

/**
 * Counts one settled payment for a listing (sqlite/quality.ts recordCall), in its write transaction. The statements that do
 * not wait on one another's answers are sent together (the store's pool is pipelined: one round trip for each group).
 */
export async function recordCall(db: Db, listingId: number, day: number, payment: PaymentFacts): Promise<void> {
  // The day of the payer's last payment for the listing and the listing's days, sent before this payment is kept.
  const lastDay =
    payment.payer === undefined
      ? undefined
      : db.query<{ day: number | null }>('SELECT max(day) AS day FROM listing_payments WHERE listing_id = $1 AND payer = $2', [
          listingId,
          payment.payer,
        ]);
  const stored = db.query<{ quality_days: unknown }>('SELECT quality_days FROM listings WHERE id = $1', [listingId]);
  for (const read of [lastDay, stored]) read?.catch(() => undefined); // awaited below
  if (payment.id !== undefined || payment.payer !== undefined) {
    const kept = await db.query(
      'INSERT INTO listing_payments (payment_id, day, listing_id, payer) VALUES ($1, $2, $3, $4) ON CONFLICT (payment_id) DO NOTHING',
      [payment.id ?? null, day, listingId, payment.payer ?? null],
    );
    if (kept.rowCount === 0) return void (await Promise.all([lastDay, stored]));
  }
  const [lastRows, storedRows] = await Promise.all([lastDay, stored]);
  const lastPaid = lastRows?.rows[0]?.day ?? null;
  const days = withPayment(
    qualityDaysOf(storedRows.rows[0]?.quality_days),
    day,
    payment.payer === undefined ? undefined : { lastPaid: lastPaid === null ? null : Number(lastPaid) },
  );
  const expired = windowStartDay(day * 86_400_000);
  // Expired payments through the day index, deleted by their row (no scan of the whole table).
  await Promise.all([
    db.query('UPDATE listings SET quality_days = $2 WHERE id = $1', [listingId, JSON.stringify(days)]),
    db.query('DELETE FROM listing_payments WHERE ctid = ANY(ARRAY(SELECT ctid FROM listing_payments WHERE day < $1 LIMIT $2))', [
      expired,
      PRUNE_BATCH,
    ]),
  ]);
}

/** The listing columns with the quality window's sums as of `now`; `p` names the parameter. */
export const listingColumns = (now: Date, p: (value: unknown) => string): string => {
  const since = p(windowStartDay(now));
  return `l.id, l.resource, l.type, l.x402_version, l.last_updated, l.body, q.calls, q.payers,
    l.liveness_status, l.liveness_checked_at, l.liveness_failing_since
    FROM listings l CROSS JOIN LATERAL (
      SELECT coalesce(sum((d ->> 1)::bigint), 0)::int AS calls, coalesce(sum((d ->> 2)::bigint), 0)::int AS payers
      FROM jsonb_array_elements(coalesce(l.quality_days, '[]'::jsonb)) d WHERE (d ->> 0)::int >= ${since}
    ) q`;
};

/** The window's calls and distinct payers of one listing (sqlite/quality.ts windowSums). */
export async function windowSums(db: Db, listingId: number, now: Date): Promise<{ calls: number; payers: number }> {
  const row = (await db.query<{ quality_days: unknown }>('SELECT quality_days FROM listings WHERE id = $1', [listingId])).rows[0];
  return windowTotals(qualityDaysOf(row?.quality_days), now);
}

/** The payments of listing `id` go, in the caller's transaction, their ids kept (sqlite/quality.ts removeQualitySignals). */
export async function removeQualitySignals(db: Db, id: string | number): Promise<void> {
  await db.query('DELETE FROM listing_payments WHERE listing_id = $1 AND payment_id IS NULL', [id]);
  await db.query('UPDATE listing_payments SET listing_id = NULL, payer = NULL WHERE listing_id = $1', [id]);
}
