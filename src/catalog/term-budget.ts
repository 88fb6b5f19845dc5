/**
 * The search budget (docs/CATALOG.md "The search budget", openapi.yaml `searchMethod`): a query may
 * hold any number of words, and what its search costs is bounded by the terms it ranks over, not by
 * refusing it. Of the query's distinct terms, in query order:
 *
 *   1. each term's rows in the index (every revision, any snapshot) are counted only as far as the
 *      choice needs (COUNT_STEPS), so a common word is never counted in full;
 *   2. terms with rows are ordered fewest rows first (ties in query order); a term whose count
 *      stopped at a step's cap comes after every term counted exactly;
 *   3. the first term is always kept (a one-term search walks its index only up to the page); each
 *      next one while fewer than MAX_SEARCHED_TERMS are kept and their rows total at most the budget;
 *   4. except when every term with rows is past the budget: the first MAX_COMMON_SEARCHED of them
 *      are kept, and the search ranks the window of their first rows (search-engine.ts).
 *
 * A term found in no listing is in neither list of the answer (it is searched by its meaning alone:
 * query-terms.ts); a term with rows left out is in `droppedTerms`, and `searchMethod` says `text_budgeted`.
 * The choice is a generator: it yields each step's counting request (terms and cap) and receives
 * each term's rows up to the cap (search-engine.ts runs it as the store's statements).
 */
import type { SearchPage } from './types.ts';
import { MAX_TERM_LENGTH, tokenize } from './terms.ts';

/** The most terms a search ranks over: past eight, a query's further words rarely change which listings lead. */
export const MAX_SEARCHED_TERMS = 8;
/** The most terms kept when every term with rows is past the budget: the window (search-engine.ts) shares the budget among them. */
const MAX_COMMON_SEARCHED = 2;
/**
 * The index rows a search reads at most: the kept terms' rows in all (past the first term, which a
 * one-term walk reads only up to its page), a filtered walk's rows per page, a window's rows (their
 * measured cost: docs/CATALOG.md "The three paths").
 */
export const SEARCH_ROW_BUDGET = 4_000;
/**
 * What one row read by its primary key (a listing's row of a term, search-engine.ts byCandidates) counts for in the
 * budget, in index rows read in order: it costs several times one of them on either store, so the candidates' reads
 * are held to a quarter of the budget (their cost: docs/BENCHMARKS.md "Filter combinations").
 */
export const LOOKUP_ROWS = 4;
/** The first counting steps: caps, and how many terms each step counts at most (query order). */
const COUNT_STEPS = [
  { cap: 64, terms: Infinity },
  { cap: 1024, terms: 128 },
] as const;
/** The counting steps for a budget (a test lowers it): those below it, then the first 16 up to the budget and one more. */
const countSteps = (budget: number) => {
  const steps = COUNT_STEPS.filter((s) => s.cap <= budget);
  return [...steps, { cap: budget + 1, terms: steps.length === 0 ? Infinity : 16 }];
};

/**
 * A term held by more than this share of the catalog's listings is one of its function words ("the",
 * "for", "api" in an API catalog): in a query of more terms than are searched, such a term would
 * take a place from a content word, and since a listing matching more terms ranks first, the
 * listings holding most function words would lead (docs/CATALOG.md "The search budget").
 */
export const FUNCTION_WORD_SHARE = 0.25;

export interface TermChoice {
  /** The terms the rank is computed over, rarest first. */
  searched: string[];
  /** The terms with rows the budget left out, in query order. */
  dropped: string[];
  method: SearchPage['searchMethod'];
}

/** Count each of `terms` up to `cap` rows (a term with more answers `cap`). */
export interface CountRequest {
  terms: string[];
  cap: number;
}

/** The distinct terms of a query, in order, each at most 64 characters (the terms a search weighs). */
export function distinctTerms(query: string): string[] {
  return [...new Set(tokenize(query).map((t) => t.slice(0, MAX_TERM_LENGTH)))];
}

/**
 * The budget's choice of terms (the steps above) among `terms` (distinctTerms). `listings`: how
 * many listings the catalog holds (asked only when `terms` are more than MAX_SEARCHED_TERMS).
 */
export function* chooseTerms(
  terms: readonly string[],
  budget: number = SEARCH_ROW_BUDGET,
  listings?: number,
): Generator<CountRequest, TermChoice, number[]> {
  /** Exact rows of the terms counted below a step's cap. */
  const exact = new Map<string, number>();
  /** The terms whose count reached its step's cap: at least that many rows. */
  let open = [...terms];
  /** Every term still open has at least this many rows (the last step's cap). */
  let atLeast = 0;
  for (const step of countSteps(budget)) {
    if (open.length === 0 || settled(exact, atLeast, budget)) break;
    // One term left that may have rows, after the first step (which tells whether it has any): it is kept whatever its rows.
    if (atLeast > 0 && open.length + [...exact.values()].filter((n) => n > 0).length <= 1) break;
    const counting = open.slice(0, step.terms);
    const rows = yield { terms: counting, cap: step.cap };
    counting.forEach((term, i) => {
      if (rows[i]! < step.cap) exact.set(term, rows[i]!);
    });
    open = open.filter((term) => !exact.has(term));
    atLeast = step.cap;
  }
  const withRows = terms.filter((term) => exact.get(term) !== 0);
  if (withRows.length === 0) return { searched: [], dropped: [], method: 'text' };
  const byRows = [...exact.entries()].filter(([, n]) => n > 0).sort((a, b) => a[1] - b[1] || terms.indexOf(a[0]) - terms.indexOf(b[0]));
  let searched: string[];
  if (byRows.length === 0) searched = open.slice(0, MAX_COMMON_SEARCHED);
  else {
    let order = [...byRows.map(([term]) => term), ...open];
    // More terms than are searched: the catalog's function words give way (FUNCTION_WORD_SHARE).
    if (withRows.length > MAX_SEARCHED_TERMS && listings !== undefined) {
      const informative = byRows.filter(([, n]) => n <= listings * FUNCTION_WORD_SHARE).map(([term]) => term);
      if (informative.length > 0) order = informative;
    }
    searched = [order[0]!];
    let rows = exact.get(order[0]!) ?? Infinity;
    for (const term of order.slice(1)) {
      const n = exact.get(term);
      if (searched.length >= MAX_SEARCHED_TERMS || n === undefined || rows + n > budget) break;
      searched.push(term);
      rows += n;
    }
  }
  const kept = new Set(searched);
  const dropped = withRows.filter((term) => !kept.has(term));
  return { searched, dropped, method: dropped.length === 0 ? 'text' : 'text_budgeted' };
}

/**
 * Whether the counts so far settle the choice: MAX_SEARCHED_TERMS terms with rows are known and fit
 * the budget, or no open term (each with at least `atLeast` rows) could join those known. Only then
 * may the counting stop before its last step.
 */
function settled(exact: ReadonlyMap<string, number>, atLeast: number, budget: number): boolean {
  const known = [...exact.values()].filter((n) => n > 0).sort((a, b) => a - b);
  if (known.length === 0) return false;
  let rows = 0;
  let kept = 0;
  for (const n of known) {
    if (kept >= MAX_SEARCHED_TERMS || (kept > 0 && rows + n > budget)) return true;
    rows += n;
    kept++;
  }
  return kept >= MAX_SEARCHED_TERMS || rows + atLeast > budget;
}
