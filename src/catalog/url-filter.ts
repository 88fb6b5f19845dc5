/**
 * The bounded read of a list page with the `url` filter (docs/CATALOG.md "List", `url`). A substring that few
 * listings hold is read from the trigram index whole (exact page and total); one that more than
 * URL_INDEX_CAP listings hold is common enough that the first listings in page order hold the page, so the
 * page is the matches among the first URL_WALK_BUDGET listings in page order, verified on each row, and the
 * answer says so (`partialResults`: `total` counts only those matches). Either way a page reads at most a
 * few thousand rows, where counting every match of a common substring read all of them.
 */

/** The most matches the trigram index is asked for before the walk in page order answers instead. */
export const URL_INDEX_CAP = 2_000;
/** The listings, in page order, a walk checks against the `url` filter at most. */
export const URL_WALK_BUDGET = 4_000;

/** `url` lowered as both stores lower an ASCII resource URL (every stored one is ASCII: ingest serializes it). */
export const asciiLower = (url: string) => url.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** The stores' options for these bounds (the differential tests lower them to walk a small catalog). */
export type UrlScale = { urlIndexCap?: number; urlWalkBudget?: number };
