/**
 * The paths a discovery request takes through the catalog, each named once here, so that /metrics
 * can say which ones serve the traffic (svc_catalog_search_path_total and
 * svc_catalog_list_path_total, docs/OPERATIONS.md "Metrics") and a path no request takes can be
 * seen and deleted. The search and list code names its path where it answers (searched, listed);
 * the catalog thread hands the names of its request's paths to the main thread with the answer
 * (threads/worker.ts), which counts them. Each request counts each path that answered it once, so
 * a page built over several rounds (or a text search that finds nothing, then the URL search) may
 * count two paths.
 */

type Store = 'sqlite' | 'postgres';
const BOTH: readonly Store[] = ['sqlite', 'postgres'];

/** GET /discovery/search's paths (docs/CATALOG.md "The three paths"; search-engine.ts chooses them). */
export const SEARCH_PATHS = {
  one_term: { stores: BOTH, about: 'one term: its index range in rank order, stopped after the page (under filters, after the budget)' },
  aggregate: {
    stores: BOTH,
    about: "several terms within the budget: every row of the kept terms summed per listing; or the filters' few listings' rows",
  },
  window: { stores: BOTH, about: "two terms past the budget: the listings among each term's first rows, ranked exactly" },
  url: { stores: BOTH, about: 'the search by resource URL: the text found nothing, or a page of its walk' },
} as const satisfies Record<string, { stores: readonly Store[]; about: string }>;

/** GET /discovery/resources's paths (docs/CATALOG.md "List"). */
export const LIST_PATHS = {
  keys: { stores: BOTH, about: "the rarest filter key's list entries in page order (no filter: every listing's)" },
  keys_deep: { stores: BOTH, about: "one filter key, a deep offset: from the key's block holding it" },
  columns: { stores: BOTH, about: "`resource` or `toolName`: the listings' own indexes" },
  price_by_time: { stores: BOTH, about: 'asset and a price cap: the price index in page order' },
  price_by_price: { stores: BOTH, about: "asset and a price cap: the price range's matches, sorted" },
  price_by_classes: { stores: BOTH, about: "asset and a price cap: each price class's range in page order, merged" },
  price_empty: { stores: BOTH, about: 'asset and a price cap the counts say no listing matches: no page read' },
  url_index: { stores: BOTH, about: '`url` held by few listings: every match from the URL index' },
  url_walk: { stores: BOTH, about: "`url` held by many: a bounded walk of the other filters' rarest key" },
} as const satisfies Record<string, { stores: readonly Store[]; about: string }>;

/**
 * What a search's first page found of its reader's kept term counts (search-engine.ts KeptCounts), counted beside the
 * paths (svc_catalog_search_kept_counts_total): how often the kept counts serve.
 */
export const KEPT_COUNTS = {
  reused: 'the page opened at the write sequence they were read at: it read only the counts they lacked',
  forgotten: 'the page opened at another sequence (a write came between): they were forgotten',
} as const;

export type SearchPath = keyof typeof SEARCH_PATHS;
export type ListPath = keyof typeof LIST_PATHS;
/** A path a request took (or what it found of the kept counts), as it crosses to the main thread. */
export type TakenPath = ['search', SearchPath] | ['list', ListPath] | ['kept_counts', keyof typeof KEPT_COUNTS];

const taken = new Map<string, TakenPath>();

/**
 * Counts `path`; given `rows`, only when they are neither undefined nor null (a path that answers nothing hands over to
 * another and is not counted), and returns them.
 */
export function searched(path: SearchPath): void;
export function searched<T>(path: SearchPath, rows: T): T;
export function searched<T>(path: SearchPath, ...rows: [T?]): T | undefined {
  if (rows.length === 0 || (rows[0] !== undefined && rows[0] !== null)) taken.set(`search ${path}`, ['search', path]);
  return rows[0];
}

/** As searched, for a list path. */
export function listed(path: ListPath): void;
export function listed<T>(path: ListPath, page: T): T;
export function listed<T>(path: ListPath, ...page: [T?]): T | undefined {
  if (page.length === 0 || (page[0] !== undefined && page[0] !== null)) taken.set(`list ${path}`, ['list', path]);
  return page[0];
}

/** What a first page found of its reader's kept counts: `reused`, or `forgotten`. */
export function keptCountsFound(outcome: keyof typeof KEPT_COUNTS): void {
  taken.set(`kept_counts ${outcome}`, ['kept_counts', outcome]);
}

/** The paths taken since the last call (the catalog thread's request), forgotten here. */
export function takenPaths(): TakenPath[] {
  const paths = [...taken.values()];
  taken.clear();
  return paths;
}
