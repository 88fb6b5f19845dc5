/**
 * `listing_accepts` as catalog migrations 1 and 5 built it (one row per listing and accepted entry), rebuilt from the
 * listings' bodies, for tests that set a catalog back to a version before migration 33 dropped it (SQLite's
 * migrations.ts retireListingAccepts): the migrations they run again read it. Each entry's `added_seq` is the latest of
 * its list keys' (listing.ts listingKeysOf), so the first entry to give a key carries that key's sequence.
 */
import type { DatabaseSync } from 'node:sqlite';
import { amountKey } from '../../src/filters.ts';
import { canonicalJson, listingKeysOf, type ListingBody } from '../../src/catalog/listing.ts';

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
  for (const l of db.prepare('SELECT id, type, owner, body FROM listings').all() as Array<{
    id: number;
    type: string;
    owner: string;
    body: string;
  }>) {
    for (const terms of (JSON.parse(l.body) as ListingBody).accepts) {
      const entry = terms as { scheme: string; network: string; asset?: unknown; amount?: unknown };
      const keys = listingKeysOf(l.type, l.owner, [entry], []).filter((k) => !['all', 'type', 'payTo'].includes(k.kind));
      const seq = Math.max(
        ...keys.map((k) => Number((keySeq.get(k.kind, k.value, l.id) as { added_seq: number } | undefined)?.added_seq ?? 0)),
      );
      const asset = typeof entry.asset === 'string' ? entry.asset : null;
      insert.run(l.id, canonicalJson(terms), entry.scheme, entry.network, seq, asset, amountKey(entry.amount) ?? null);
    }
  }
}
