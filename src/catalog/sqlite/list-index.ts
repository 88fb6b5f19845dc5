/**
 * The list endpoint's index (openapi.yaml `GET /discovery/resources`), kept in the write
 * transaction:
 *
 * - `listing_keys`: one row per (filter, value, listing) with the listing's lastUpdated, so a
 *   filtered page is a walk of one covering index (`listing_keys_page`), and the write sequence
 *   that added it (`added_seq`: a search cursor reads a listing's extension keys as of its snapshot);
 * - `listing_counts`: the totals, overall (kind 'all') and per filter value, a view: the sum of the
 *   value's block counts below, so a write keeps one count, not two;
 * - `listing_key_blocks`: cheap deep `offset` pages. Each filter value's entries, in page order
 *   (lastUpdated desc, listing desc), are cut into contiguous blocks of about BLOCK_SIZE entries,
 *   each stored as its start key and its count. A page at offset N sums about N / BLOCK_SIZE block
 *   counts and then skips fewer than 2 × BLOCK_SIZE index entries, instead of N: an
 *   order-statistics index kept in SQL.
 *
 * A block is named by its start key S, the newest key it may hold: it holds the keys ≤ S that are
 * newer than the next block's start. The newest block starts at a sentinel above every timestamp,
 * so every key has a block. A block that grows past 2 × BLOCK_SIZE is split at its BLOCK_SIZE-th
 * entry; an emptied block is deleted (its range joins the newer block beside it, which holds no key
 * of that range).
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { HIDDEN_IDS_SQL } from './liveness.ts';
import { BLOCK_SIZE, listKeyHeld, NEWEST_BLOCK, type ListingKey } from '../listing.ts';
import { hiddenByAgeSql, type SortKey } from '../list-engine.ts';
import { rows, runSync } from '../statements.ts';
import { bindTo, sqliteSql } from './queries.ts';

/**
 * Adds the keys a listing answers to (INSERT OR IGNORE), each new one with the write sequence `seq`
 * that added it, and moves all its keys to `lastUpdated`. Runs inside the write transaction; returns
 * what changed so the caller can count it in the blocks (countKeyChanges), which hold the totals.
 */
export function insertListingKeys(db: DatabaseSync, listingId: number, lastUpdated: string, keys: ListingKey[], seq: number): KeyChanges {
  const moved = (
    cachedStatement(db, 'SELECT kind, value, last_updated FROM listing_keys WHERE listing_id = ? AND last_updated <> ?').all(
      listingId,
      lastUpdated,
    ) as Array<{ kind: ListingKey['kind']; value: string; last_updated: string }>
  ).map((row) => ({ kind: row.kind, value: row.value, from: row.last_updated }));
  cachedStatement(db, 'UPDATE listing_keys SET last_updated = ? WHERE listing_id = ? AND last_updated <> ?').run(
    lastUpdated,
    listingId,
    lastUpdated,
  );
  const insert = cachedStatement(
    db,
    'INSERT OR IGNORE INTO listing_keys (kind, value, listing_id, last_updated, added_seq) VALUES (?, ?, ?, ?, ?)',
  );
  return { added: keys.filter((key) => Number(insert.run(key.kind, key.value, listingId, lastUpdated, seq).changes) === 1), moved };
}

/** What one write changed in `listing_keys`: keys added, and keys moved from an older lastUpdated. */
export interface KeyChanges {
  added: ListingKey[];
  moved: Array<ListingKey & { from: string }>;
}

/** The block holding `key`: the one with the smallest start at or above it. */
function blockOf(db: DatabaseSync, key: ListingKey, at: SortKey): { start: SortKey; n: number } | undefined {
  const row = cachedStatement(
    db,
    `SELECT start_updated, start_id, n FROM listing_key_blocks
     WHERE kind = ? AND value = ? AND (start_updated, start_id) >= (?, ?)
     ORDER BY start_updated ASC, start_id ASC LIMIT 1`,
  ).get(key.kind, key.value, at.lastUpdated, at.listingId) as { start_updated: string; start_id: number; n: number } | undefined;
  return row && { start: { lastUpdated: row.start_updated, listingId: Number(row.start_id) }, n: Number(row.n) };
}

function insertBlock(db: DatabaseSync, key: ListingKey, start: SortKey, n: number): void {
  cachedStatement(db, 'INSERT INTO listing_key_blocks (kind, value, start_updated, start_id, n) VALUES (?, ?, ?, ?, ?)').run(
    key.kind,
    key.value,
    start.lastUpdated,
    start.listingId,
    n,
  );
}

function setBlockCount(db: DatabaseSync, key: ListingKey, start: SortKey, n: number): void {
  const where = 'WHERE kind = ? AND value = ? AND start_updated = ? AND start_id = ?';
  if (n === 0 && start.lastUpdated !== NEWEST_BLOCK) {
    cachedStatement(db, `DELETE FROM listing_key_blocks ${where}`).run(key.kind, key.value, start.lastUpdated, start.listingId);
  } else {
    cachedStatement(db, `UPDATE listing_key_blocks SET n = ? ${where}`).run(n, key.kind, key.value, start.lastUpdated, start.listingId);
  }
}

/** Counts an entry already written to `listing_keys` (a split reads the block's entries). */
function addToBlock(db: DatabaseSync, key: ListingKey, at: SortKey): void {
  const block = blockOf(db, key, at);
  if (!block) return insertBlock(db, key, { lastUpdated: NEWEST_BLOCK, listingId: 0 }, 1);
  if (block.n < 2 * BLOCK_SIZE) return setBlockCount(db, key, block.start, block.n + 1);
  // Split: the block's (BLOCK_SIZE + 1)-th entry starts a new block holding the rest.
  const middle = cachedStatement(
    db,
    `SELECT last_updated, listing_id FROM listing_keys
     WHERE kind = ? AND value = ? AND (last_updated, listing_id) <= (?, ?)
     ORDER BY last_updated DESC, listing_id DESC LIMIT 1 OFFSET ?`,
  ).get(key.kind, key.value, block.start.lastUpdated, block.start.listingId, BLOCK_SIZE) as { last_updated: string; listing_id: number };
  setBlockCount(db, key, block.start, BLOCK_SIZE);
  insertBlock(db, key, { lastUpdated: middle.last_updated, listingId: Number(middle.listing_id) }, block.n + 1 - BLOCK_SIZE);
}

export function removeFromBlock(db: DatabaseSync, key: ListingKey, at: SortKey): void {
  const block = blockOf(db, key, at);
  if (block) setBlockCount(db, key, block.start, block.n - 1);
}

/** Brings the blocks up to date with one write's key changes (same transaction, after the write). */
export function countKeyChanges(db: DatabaseSync, listingId: number, lastUpdated: string, changes: KeyChanges): void {
  const at = { lastUpdated, listingId };
  for (const key of changes.moved) {
    removeFromBlock(db, key, { lastUpdated: key.from, listingId });
    addToBlock(db, key, at);
  }
  for (const key of changes.added) addToBlock(db, key, at);
}

/**
 * Moves every list entry of listing `id` (its keys, with their blocks, and its price rows) to `lastUpdated`: out of every
 * list read's range when a lifecycle pass hides it (../lifecycle.ts HIDDEN_LIST_TIME), back to its row's time when it
 * is put back.
 */
export function moveListEntries(db: DatabaseSync, id: number, lastUpdated: string): void {
  countKeyChanges(db, id, lastUpdated, insertListingKeys(db, id, lastUpdated, [], 0));
  cachedStatement(db, 'UPDATE listing_prices SET last_updated = ? WHERE listing_id = ? AND last_updated <> ?').run(
    lastUpdated,
    id,
    lastUpdated,
  );
}

/** How many listings answer to a list key (the view `listing_counts`: the sum of its blocks). */
export function listingsWith(db: DatabaseSync, key: ListingKey): number {
  const row = cachedStatement(db, 'SELECT n FROM listing_counts WHERE kind = ? AND value = ?').get(key.kind, key.value) as
    { n: number } | undefined;
  return Number(row?.n ?? 0);
}

/**
 * The conditions (each after ` AND`) that listing `listing` (an SQL expression) holds each of `keys` (an entry of each
 * in `listing_keys`), meets `accepts` (a condition on its accepted entries or prices, when given) and is not hidden by
 * failing its liveness checks since before `failing`, with their parameters in order (postgres/queries.ts
 * heldFiltersSql on Postgres).
 */
export function heldFiltersSql(
  listing: string,
  keys: ListingKey[],
  accepts: { condition: string; params: Array<string | number> } | undefined,
  failing: string | undefined,
): { sql: string; params: Array<string | number> } {
  const params: Array<string | number> = [];
  const held = keys.map((key) => ` AND ${listKeyHeld(bindTo(params), key, listing)}`).join('');
  return {
    sql: held + (accepts ? ` AND ${accepts.condition}` : '') + (failing === undefined ? '' : ` AND ${listing} NOT IN ${HIDDEN_IDS_SQL}`),
    params: [...params, ...(accepts?.params ?? []), ...(failing === undefined ? [] : [failing])],
  };
}

/** The entries of a list key last updated before `since` (../list-engine.ts hiddenByAgeSql). */
export function hiddenCount(db: DatabaseSync, key: ListingKey, since: string): number {
  const [hidden] = runSync(rows<{ n: number }>(sqliteSql(db), hiddenByAgeSql('?1', '?2', '?3'), [key.kind, key.value, since]));
  return Number(hidden!.n);
}
