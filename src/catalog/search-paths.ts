/**
 * Which path served each search and list page (docs/OPERATIONS.md, `svc_catalog_search_path_total`):
 * a count per path name, kept by the process (or catalog thread) that ran the page and read by the
 * metrics. The names are a closed list, so the label stays bounded.
 */
export const SEARCH_PATHS = ['one_term', 'aggregate', 'window', 'url'] as const;
export type SearchPath = (typeof SEARCH_PATHS)[number];

const served = new Map<SearchPath, number>(SEARCH_PATHS.map((path) => [path, 0]));

/** Counts one page served by `path`. */
export function countSearchPath(path: SearchPath): void {
  served.set(path, served.get(path)! + 1);
}

/** The pages each path has served so far. */
export function searchPathCounts(): ReadonlyMap<SearchPath, number> {
  return served;
}
