/**
 * The catalog's common terms chosen by the settle write (src/catalog/sqlite/common-terms.ts
 * commonTermsOf; docs/CATALOG.md "Search"): a catalog migrated empty, as every new
 * one is, has none, so its 8-term queries cannot read the common-term masks until the write that
 * finds the catalog grown to the threshold chooses them. A real SQLite file, the store's own
 * writes, the threshold lowered to 300 revisions. The choice also fills the pairs' first pages (pair-tops.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { COMMON_TERMS } from '../../src/catalog/common-terms.ts';
import { searchCatalog, type SearchSource } from '../../src/catalog/sqlite/search.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PAY_TO_A, pairTopsOffKey, revisionsWithWrongCommonMask, seededRandom, tempDir } from './fixtures.ts';

const CHOSEN_AT = 300;
const rand = seededRandom(0x5eed16);
const WORDS = Array.from({ length: 20 }, (_, k) => `word${String.fromCharCode(97 + k)}`);

/** A listing whose description holds each word with a falling chance, so the words' row counts differ. */
function draft(i: number): ListingDraft {
  const words = WORDS.filter((_, k) => rand() < 0.95 - k * 0.04);
  return {
    resource: `https://api.example.com/r${i}`,
    type: 'http',
    toolName: '',
    owner: PAY_TO_A,
    x402Version: 2,
    terms: { scheme: 'exact', network: 'stellar:testnet', asset: 'CASSET', amount: '100', payTo: PAY_TO_A, maxTimeoutSeconds: 60 },
    metadata: { description: `listing ${i} ${words.join(' ')}` },
    bazaar: { info: { input: { type: 'http', method: 'GET' } } },
    parameterText: '',
    dropped: [],
  };
}

const dir = tempDir();
afterAll(() => dir.cleanup());

describe('common terms chosen by the write that finds the catalog grown', () => {
  it('none below the threshold; the write past it chooses the 16 terms with most rows and every revision carries its mask; 8 of them then read the masks', () => {
    const store = new CatalogStore(`${dir.dir}/catalog.sqlite`, { commonTermsChosenAt: CHOSEN_AT });
    try {
      const chosen = () =>
        store.db
          .prepare('SELECT term FROM search_common_terms ORDER BY bit')
          .all()
          .map((r) => (r as { term: string }).term);
      const start = Date.parse('2026-01-01T00:00:00Z');
      const write = (i: number) => expect(store.writeListing(draft(i), new Date(start + i * 1000)).status).toBe('written');
      // Migrated empty: nothing chosen. The write that finds CHOSEN_AT revisions is the 301st.
      expect(chosen()).toEqual([]);
      for (let i = 0; i < CHOSEN_AT; i++) write(i);
      expect(chosen()).toEqual([]);
      expect(store.db.prepare('SELECT count(*) AS n FROM search_revisions WHERE common_mask <> 0').get()).toEqual({ n: 0 });
      write(CHOSEN_AT);
      // Chosen from the rows of the revisions before that write's own.
      const byRows = store.db
        .prepare(
          `SELECT term FROM search_terms WHERE rev <= ${CHOSEN_AT} GROUP BY term ORDER BY count(*) DESC, term ASC LIMIT ${COMMON_TERMS}`,
        )
        .all()
        .map((r) => (r as { term: string }).term);
      expect(chosen()).toEqual(byRows);
      expect(byRows.filter((term) => WORDS.includes(term)).length).toBeGreaterThanOrEqual(COMMON_TERMS - 2);
      // Later writes keep their masks; every revision's mask and sum are those of its term rows,
      // the ones written before the choice included.
      for (let i = CHOSEN_AT + 1; i < CHOSEN_AT + 40; i++) write(i);
      expect(chosen()).toEqual(byRows);
      expect(revisionsWithWrongCommonMask(store.db)).toEqual([]);
      // The choice also kept each pair's first pages (pair-tops.ts), and the later writes their rows.
      expect(store.db.prepare('SELECT count(*) AS n FROM search_pair_bounds').get()).toEqual({
        n: (COMMON_TERMS * (COMMON_TERMS - 1)) / 2,
      });
      expect(pairTopsOffKey(store.db)).toEqual([]);
      expect(store.db.prepare('SELECT count(*) AS n FROM search_revisions WHERE common_mask <> 0').get()).toEqual({
        n: CHOSEN_AT + 40,
      });
      // An 8-term query of chosen words reads the masks (with the driver cap at 0, as for common words at scale).
      let maskScans = 0;
      /** Terms counted in full (term-tiers.ts termRowCount), in order. */
      const fullCounts: string[] = [];
      const source = Object.assign(Object.create(store) as CatalogStore, {
        tierDriverRows: 0,
        statement(this: CatalogStore, sql: string) {
          if (sql.includes('INDEXED BY search_revisions_by_common')) maskScans++;
          const statement = CatalogStore.prototype.statement.call(this, sql);
          if (!sql.startsWith('SELECT count(*) AS n FROM search_terms INDEXED BY search_terms_top WHERE term = ?')) return statement;
          return { get: (term: string) => (fullCounts.push(term), statement.get(term)) };
        },
      }) as SearchSource;
      const page = searchCatalog(
        source,
        byRows.slice(0, 8).join(' '),
        {},
        { limit: 5 },
        new Date(start + 10_000_000),
        DISCOVERY_X402_VERSION,
      );
      expect(page.resources.length).toBe(5);
      expect(maskScans).toBe(1);
      // Chosen words are counted only as the driver, the one chosen with the fewest rows (the
      // highest bit): here the 8th of the query, and for 3 words (the revision scan) the 3rd.
      expect(fullCounts).toEqual([byRows[7]]);
      fullCounts.length = 0;
      const three = [byRows[5]!, byRows[2]!, byRows[9]!];
      const threePage = searchCatalog(source, three.join(' '), {}, { limit: 5 }, new Date(start + 10_000_000), DISCOVERY_X402_VERSION);
      expect(threePage.resources.length).toBe(5);
      expect(fullCounts).toEqual([byRows[9]]);
    } finally {
      store.close();
    }
  }, 120_000);
});
