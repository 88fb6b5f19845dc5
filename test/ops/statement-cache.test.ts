/**
 * The per-connection statement cache (src/db/sqlite.ts cachedStatement) is bounded: SQL texts that
 * depend on the request (search tiers, price plans) must not grow it without limit, while the
 * statements in steady use (the settle path's) stay prepared.
 */
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STATEMENT_CACHE_LIMIT, cachedStatement, cachedStatementCount } from '../../src/db/sqlite.ts';
import { tempDir } from '../catalog/fixtures.ts';

const dir = tempDir();
afterAll(() => dir.cleanup());

describe('cachedStatement', () => {
  it('keeps at most STATEMENT_CACHE_LIMIT statements, evicting the least recently used', () => {
    const db = new DatabaseSync(join(dir.dir, 'cache.sqlite'));
    db.exec('CREATE TABLE t (a INTEGER)');
    const hot = cachedStatement(db, 'SELECT count(*) AS n FROM t');
    const firstOneOff = cachedStatement(db, 'SELECT a + 0 AS v FROM t');
    for (let i = 1; i < STATEMENT_CACHE_LIMIT * 3; i++) {
      expect(cachedStatement(db, `SELECT a + ${i} AS v FROM t`).all()).toEqual([]);
      // The statement in steady use is used between the others: it stays cached.
      if (i % 10 === 0) expect(cachedStatement(db, 'SELECT count(*) AS n FROM t')).toBe(hot);
      expect(cachedStatementCount(db)).toBeLessThanOrEqual(STATEMENT_CACHE_LIMIT);
    }
    expect(cachedStatementCount(db)).toBe(STATEMENT_CACHE_LIMIT);
    expect(cachedStatement(db, 'SELECT count(*) AS n FROM t')).toBe(hot);
    // The oldest one-off statement was evicted (asking again prepares a new one); the newest was not.
    const newest = `SELECT a + ${STATEMENT_CACHE_LIMIT * 3 - 1} AS v FROM t`;
    const kept = cachedStatement(db, newest);
    expect(cachedStatement(db, 'SELECT a + 0 AS v FROM t')).not.toBe(firstOneOff);
    expect(cachedStatement(db, newest)).toBe(kept);
    db.close();
  });
});
