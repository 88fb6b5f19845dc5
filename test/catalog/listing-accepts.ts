/**
 * `listing_accepts` as catalog migrations 1 and 5 built it (one row per listing and accepted entry), rebuilt from the
 * listings' bodies, for tests that set a catalog back to a version before migration 33 dropped it (SQLite's
 * migrations.ts retireListingAccepts): the migrations they run again read it. Each entry's `added_seq` is the latest of
 * its list keys' (listing.ts listingKeysOf), so the first entry to give a key carries that key's sequence. Postgres's
 * (migrations 1 and 6, dropped by 45): recreatePostgresListingAccepts.
 */
import type { DatabaseSync } from 'node:sqlite';
import type pg from 'pg';
import { amountKey } from '../../src/filters.ts';
import { canonicalJson, listingKeysOf, type ListingBody } from '../../src/catalog/listing.ts';

type AcceptedRow = [number, string, string, string, number, string | null, string | null];

/** Each listing's accepted entries as rows of `listing_accepts`, from its body and its list keys' sequences. */
function acceptedRows(
  listings: Array<{ id: number | string; type: string; owner: string; body: string }>,
  keySeq: (kind: string, value: string, listingId: number) => number,
): AcceptedRow[] {
  return listings.flatMap((l) =>
    (JSON.parse(l.body) as ListingBody).accepts.map((terms): AcceptedRow => {
      const entry = terms as { scheme: string; network: string; asset?: unknown; amount?: unknown };
      const id = Number(l.id);
      const keys = listingKeysOf(l.type, l.owner, [entry], []).filter((k) => !['all', 'type', 'payTo'].includes(k.kind));
      const seq = Math.max(...keys.map((k) => keySeq(k.kind, k.value, id)));
      const asset = typeof entry.asset === 'string' ? entry.asset : null;
      return [id, canonicalJson(terms), entry.scheme, entry.network, seq, asset, amountKey(entry.amount) ?? null];
    }),
  );
}

export function recreateListingAccepts(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE listing_accepts (
      listing_id INTEGER NOT NULL,
      terms_key TEXT NOT NULL,
      scheme TEXT NOT NULL,
      network TEXT NOT NULL,
      added_seq INTEGER NOT NULL,
      asset TEXT,
      amount TEXT,
      PRIMARY KEY (listing_id, terms_key)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_accepts_by_scheme ON listing_accepts (scheme, listing_id);
    CREATE INDEX listing_accepts_by_network ON listing_accepts (network, listing_id);
    CREATE INDEX listing_accepts_by_asset ON listing_accepts (asset, listing_id);
  `);
  const keySeq = db.prepare('SELECT added_seq FROM listing_keys WHERE kind = ? AND value = ? AND listing_id = ?');
  const insert = db.prepare('INSERT OR IGNORE INTO listing_accepts VALUES (?, ?, ?, ?, ?, ?, ?)');
  const listings = db.prepare('SELECT id, type, owner, body FROM listings').all() as Array<{
    id: number;
    type: string;
    owner: string;
    body: string;
  }>;
  const seqOf = (kind: string, value: string, id: number) =>
    Number((keySeq.get(kind, value, id) as { added_seq: number } | undefined)?.added_seq ?? 0);
  for (const row of acceptedRows(listings, seqOf)) insert.run(...row);
}

export async function recreatePostgresListingAccepts(db: pg.Pool | pg.Client): Promise<void> {
  await db.query(`
    CREATE TABLE listing_accepts (
      listing_id BIGINT NOT NULL,
      terms_key TEXT COLLATE "C" NOT NULL,
      scheme TEXT COLLATE "C" NOT NULL,
      network TEXT COLLATE "C" NOT NULL,
      added_seq BIGINT NOT NULL,
      asset TEXT COLLATE "C",
      amount TEXT COLLATE "C",
      PRIMARY KEY (listing_id, terms_key)
    );
    CREATE INDEX listing_accepts_by_asset ON listing_accepts (asset, listing_id);`);
  const listings = (await db.query<{ id: string; type: string; owner: string; body: string }>('SELECT id, type, owner, body FROM listings'))
    .rows;
  const seqs = new Map<string, number>();
  for (const k of (
    await db.query<{ kind: string; value: string; listing_id: string; added_seq: string }>(
      'SELECT kind, value, listing_id, added_seq FROM listing_keys',
    )
  ).rows)
    seqs.set(`${k.listing_id}\u0000${k.kind}\u0000${k.value}`, Number(k.added_seq));
  for (const row of acceptedRows(listings, (kind, value, id) => seqs.get(`${id}\u0000${kind}\u0000${value}`) ?? 0))
    await db.query('INSERT INTO listing_accepts VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING', row);
}
