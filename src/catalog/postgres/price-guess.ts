/**
 * A priced list page's statement sent right behind its counts (docs/CATALOG.md "Postgres"), so the page is one round
 * trip. The counts decide the statement (price-index.ts listPriced), so the store remembers, per filters (and shallow
 * or deep page), the shape the last page took, and sends this page's statement of that shape on the pipelined pool.
 * listPriced takes its rows only when the statement it chooses is the very one sent (same text and values, same
 * snapshot), so the answer is the one it would read itself; otherwise the guess's rows are left unread. Only pages
 * whose filters are all in the price range (price.ts inPriceRange) are guessed: with another key filter the page may
 * be walked from that filter's listings instead.
 */
import { DEEP_OFFSET, filterKeys, type ListingRow } from '../listing.ts';
import { inPriceRange } from '../price.ts';
import type { DiscoveryFilters } from '../types.ts';
import type { PricedPageShape } from '../price.ts';
import { pricedPageStatement } from './price-index.ts';
import { readPage, type Db, type PageStatement } from './queries.ts';

/** Shapes kept per store; past this many filter combinations the memory starts again. */
const KEPT_SHAPES = 1000;

export class PricedPageGuesses {
  private readonly shapes = new Map<string, PricedPageShape>();

  private static key(filters: DiscoveryFilters, page: { limit: number; offset: number }, visibleSince: string | undefined): string {
    return JSON.stringify([filters, page.offset + page.limit >= DEEP_OFFSET, visibleSince === undefined]);
  }

  /** This page's statement in the last shape of its filters, sent now (not awaited), or undefined when there is none. */
  send(
    db: Db,
    filters: DiscoveryFilters,
    page: { limit: number; offset: number },
    now: Date,
    visibleSince: string | undefined,
    failingBefore: string | undefined,
  ): { statement: PageStatement; rows: Promise<ListingRow[]> } | undefined {
    if (!filterKeys(filters).every((k) => inPriceRange(k.kind))) return undefined;
    const shape = this.shapes.get(PricedPageGuesses.key(filters, page, visibleSince));
    // A remembered failing cut is the cut of that call: this page's own cut, when the last page left failing listings out.
    if (!shape || (shape.failing !== undefined && failingBefore === undefined)) return undefined;
    const statement = pricedPageStatement(filters, { ...shape, failing: shape.failing && failingBefore }, [], page, now, visibleSince);
    const rows = readPage(db, statement);
    rows.catch(() => undefined); // a guess not taken is never awaited; a failed one fails the counts' transaction anyway
    return { statement, rows };
  }

  /** The shape listPriced chose for a page of `filters`. */
  remember(
    filters: DiscoveryFilters,
    page: { limit: number; offset: number },
    visibleSince: string | undefined,
    shape: PricedPageShape,
  ): void {
    if (this.shapes.size >= KEPT_SHAPES) this.shapes.clear();
    this.shapes.set(PricedPageGuesses.key(filters, page, visibleSince), shape);
  }
}
