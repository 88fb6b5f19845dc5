/**
 * Discovery pages a stock client can read (docs/CATALOG.md "Page size"): the bazaar client of
 * @x402/extensions refuses an answer over 4 MiB, which a page of listings near the catalog's caps
 * can exceed. Such a page is shrunk to the listings that fit, and says so as its route's paging
 * does: `pagination.limit` is the number it was served with. One listing always fits. The rule holds
 * for every answer that carries a page, measured as it is sent: the routes' JSON body, and the MCP
 * tools' whole JSON-RPC message (src/mcp/search.ts, whose result holds each hit twice).
 */
import type { ListPage, SearchPage } from './types.ts';

/** The largest discovery answer a stock bazaar client reads. */
export const MAX_DISCOVERY_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * Room for what a route adds around the page it measured (GET /discovery/merchant's `payTo` and
 * key names; the MCP SDK's `resultType` and `_meta` beside a tool's result).
 */
const ROUTE_MARGIN_BYTES = 1024;

/** The bytes a page may take as the catalog serializes it. */
const PAGE_BUDGET_BYTES = MAX_DISCOVERY_RESPONSE_BYTES - ROUTE_MARGIN_BYTES;

/** A page with the JSON text it was measured as (the bytes the route sends). */
export interface MeasuredPage<Page> {
  page: Page;
  text: string;
}

const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');

/** The text of `page` when it fits the budget, else undefined. A string of n code units is at most 3n bytes. */
function textWithin<Page>(page: Page, text: (page: Page) => string): string | undefined {
  const sent = text(page);
  return sent.length * 3 <= PAGE_BUDGET_BYTES || bytesOf(sent) <= PAGE_BUDGET_BYTES ? sent : undefined;
}

/**
 * How many of `items`, from the first, fit in PAGE_BUDGET_BYTES as `render` sends them (`render(items)`:
 * the answer holding those items); at least one. An item's bytes are what it adds to the answer
 * of none, however many times the answer holds it.
 */
function fittingCount<Item>(render: (items: Item[]) => string, items: readonly Item[]): number {
  const [first] = items;
  if (first === undefined) return 1;
  const empty = bytesOf(render([]));
  const added = (item: Item) => bytesOf(render([item])) - empty;
  const separator = bytesOf(render([first, first])) - empty - 2 * added(first);
  let used = empty;
  let count = 0;
  for (const item of items) {
    used += added(item) + (count > 0 ? separator : 0);
    if (used > PAGE_BUDGET_BYTES) break;
    count++;
  }
  return Math.max(1, count);
}

/** A list page within the budget: its first listings that fit, `pagination.limit` their number. */
export function listWithin(page: ListPage): MeasuredPage<ListPage> {
  const text = textWithin(page, JSON.stringify);
  if (text !== undefined) return { page, text };
  const count = fittingCount((items) => JSON.stringify({ ...page, items }), page.items);
  const shrunk: ListPage = { ...page, items: page.items.slice(0, count), pagination: { ...page.pagination, limit: count } };
  return { page: shrunk, text: JSON.stringify(shrunk) };
}

/**
 * A search page whose answer is within the budget: the same search asked again (`again`) with the
 * page size of the results that fit, so its cursor continues right after them. `text` is the
 * answer as sent (by default the page's JSON, GET /discovery/search's body). A catalog changing in
 * between may make that page differ; it is measured again, each time smaller.
 */
export async function searchWithin<Page extends SearchPage>(
  page: Page,
  again: (limit: number) => Promise<Page>,
  text: (page: Page) => string = JSON.stringify,
): Promise<MeasuredPage<Page>> {
  let current = page;
  for (;;) {
    const sent = textWithin(current, text);
    if (sent !== undefined) return { page: current, text: sent };
    if (current.resources.length <= 1) return { page: current, text: text(current) };
    const shell = current;
    const count = fittingCount((resources) => text({ ...shell, resources }), current.resources);
    current = await again(Math.min(count, current.resources.length - 1));
  }
}
