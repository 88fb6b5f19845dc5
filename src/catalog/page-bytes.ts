/**
 * Discovery pages a stock client can read: the bazaar client of @x402/extensions refuses an
 * answer over 4 MiB (its MAX_DISCOVERY_RESPONSE_BYTES), and a page of 100 listings with large
 * extensions and terms can weigh about 13 MiB. A page over the budget is shrunk to the listings
 * that fit, and says so as its route's paging does (openapi.yaml, docs/CATALOG.md "Page size"):
 * `pagination.limit` is the number it was served with, so the list's next offset and the search's
 * cursor start right after it. One listing always fits (the catalog's caps keep it far smaller).
 */
import type { ListPage, SearchPage } from './types.ts';

/** The largest discovery answer a stock bazaar client reads. */
export const MAX_DISCOVERY_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Room for what a route adds around the catalog's page (GET /discovery/merchant's `payTo` and key names). */
const ROUTE_MARGIN_BYTES = 1024;

/** The bytes a page may take as the catalog serializes it. */
export const PAGE_BUDGET_BYTES = MAX_DISCOVERY_RESPONSE_BYTES - ROUTE_MARGIN_BYTES;

/** A page with the JSON text it was measured as (the bytes the route sends). */
export interface MeasuredPage<Page> {
  page: Page;
  text: string;
}

const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');

/** The text of `page` when it fits the budget, else undefined. A string of n code units is at most 3n bytes. */
function textWithin(page: object, budget: number): string | undefined {
  const text = JSON.stringify(page);
  return text.length * 3 <= budget || bytesOf(text) <= budget ? text : undefined;
}

/**
 * How many of `items`, from the first, fit in the budget beside the rest of `page` (`empty`: the
 * page without items); at least one.
 */
function fittingCount(empty: object, items: readonly unknown[], budget: number): number {
  let used = bytesOf(JSON.stringify(empty));
  let count = 0;
  for (const item of items) {
    used += bytesOf(JSON.stringify(item)) + (count > 0 ? 1 : 0);
    if (used > budget) break;
    count++;
  }
  return Math.max(1, count);
}

/** A list page within the budget: its first listings that fit, `pagination.limit` their number. */
export function listWithin(page: ListPage, budget = PAGE_BUDGET_BYTES): MeasuredPage<ListPage> {
  const text = textWithin(page, budget);
  if (text !== undefined) return { page, text };
  const count = fittingCount({ ...page, items: [] }, page.items, budget);
  const shrunk: ListPage = { ...page, items: page.items.slice(0, count), pagination: { ...page.pagination, limit: count } };
  return { page: shrunk, text: JSON.stringify(shrunk) };
}

/**
 * A search page within the budget: the same search asked again (`again`) with the page size of
 * the results that fit, so its cursor continues right after them. A catalog changing in between
 * may make that page differ; it is measured again, each time smaller.
 */
export async function searchWithin(
  page: SearchPage,
  again: (limit: number) => Promise<SearchPage>,
  budget = PAGE_BUDGET_BYTES,
): Promise<MeasuredPage<SearchPage>> {
  let current = page;
  for (;;) {
    const text = textWithin(current, budget);
    if (text !== undefined) return { page: current, text };
    if (current.resources.length <= 1) return { page: current, text: JSON.stringify(current) };
    const count = fittingCount({ ...current, resources: [] }, current.resources, budget);
    current = await again(Math.min(count, current.resources.length - 1));
  }
}
