/**
 * GET /discovery/search on PostgreSQL (docs/CATALOG.md "Search" and "Postgres"): the same rank,
 * tie-break, cursor and snapshot as the SQLite store (sqlite/search.ts), computed by the server from the
 * write-time term rows (migrations.ts). Nothing is ranked in JavaScript:
 *
 * - one term: rank = 1e6 + milli for every match, so the page is a walk of the index
 *   (term, milli desc, listing asc) that stops after the page;
 * - three or more terms whose rarest have few rows (natural sentences): the tiers read from those
 *   terms' rows (term-tiers.ts, as sqlite/term-tiers.ts termTiersTopK);
 * - several terms without filters: the threshold walk of sqlite/search.ts, run by the server
 *   (catalog_walk in migrations.ts);
 * - otherwise (filters, or a walk past its cap): listings holding every term rank above all
 *   others, so that tier is read from the rarest term's rows (those whose signature lacks a query
 *   term's bit dropped in the index scan, the rest checked for the others by key)
 *   and, when it fills the page, is the page; otherwise one aggregate sums the query's terms' rows
 *   per listing and orders them.
 *
 * Every page of a cursor walk reads the catalog as of the sequence number its first page pinned
 * (term rows carry their revision's [from_seq, to_seq), accepts and extensions their added_seq),
 * so the keyset (rank desc, id asc) visits each match once. No transaction is needed for that:
 * writes commit in sequence order (store.ts), so every write up to the pinned number is
 * visible to any later statement, and every row a search reads is selected by sequence number.
 * (Only the listings' own content is read as it is now, as on SQLite.) So a page is a few
 * statements on the pool, and an unfiltered several-term page is one: the sequence, the walk and
 * the page's listings (each round trip costs about 0.1 ms on loopback, more when the server
 * process has gone idle and must be woken).
 */
import { roundedMilliSql } from './migrations.ts';
import {
  THRESHOLD_WALK_CAP,
  VISIBILITY_ROUNDS,
  WALK_CHUNKS,
  bindingHash,
  choiceFields,
  choiceIndexes,
  decodeCursor,
  encodeCursor,
  keepVisible,
  emptySearchPage,
  pinnedChoice,
  pinnedUrlChoice,
  visibilityBatch,
  type CursorState,
  type RankedRow,
} from '../search.ts';
import { revisionScanTier } from './revision-scan.ts';
import { MASK_SCAN_TERMS, commonTermsTier } from './common-terms-scan.ts';
import { termTiersTier } from './term-tiers.ts';
import { chosenCommonTerms, listingCount, termRowCounts, termRowsUpTo } from './term-counts.ts';
import { urlSearchPage } from './url-search.ts';
import { filterPlan, setDrivenRows, windowRows } from './filter-driver.ts';
import { aggregate, keysetAfter, oneTerm, ranked } from './term-paths.ts';
import { filterConditions, holdsNul, parameters, rowsById, termRowConditions, type Db } from './queries.ts';
import { toDiscoveryResource, type ListingRow } from '../listing.ts';
import { windowStartDay } from '../quality.ts';
import { REVISION_SCAN_TERMS, queryLimitViolation, termSlots } from '../terms.ts';
import { MAX_SEARCHED_TERMS, SEARCH_ROW_BUDGET, chooseTerms, distinctTerms, runChoiceAsync, type TermChoice } from '../term-budget.ts';
import { CatalogQueryError, type DiscoveryFilters, type SearchPage } from '../types.ts';
import type { UrlSample } from '../url-filter.ts';
import { searched } from '../query-paths.ts';

export interface SearchContext {
  secret: Buffer;
  /** Runs each statement on its own (a pool): see above for why a page needs no transaction. */
  db: Db;
  /** TIER_FIRST_MIN_ROWS unless set (a test lowers it to reach the tier-first path on a small catalog). */
  tierFirstMinRows?: number;
  /** term-tiers.ts TIER_DRIVER_ROWS_CAP unless set (a test lowers it to reach the walk and the common-word paths). */
  tierDriverRows?: number;
  /** The search budget's rows, SEARCH_ROW_BUDGET unless set (term-budget.ts; a test lowers it to reach it on a small catalog). */
  searchRowBudget?: number;
  /** The most listings that drive a filtered search, FILTER_DRIVER_LISTINGS unless set (filter-driver.ts; a test sets 0). */
  filterDriverListings?: number;
  /** The store's sample of spelled URLs, which chooses how a `url` filter's listings are read (url-probe.ts). */
  urlSample?: UrlSample;
}

/** The all-terms tier is read first only when every term has at least this many rows (the common words). */
const TIER_FIRST_MIN_ROWS = 1000;

/**
 * Up to how many rows of the rarest term may hold every term (by their signature) for an
 * unfiltered query to read the all-terms tier before the walk: the tier ranks each of them (a key
 * lookup per term), the walk reads the terms' share lists, and for the most common words the
 * tier is small while the walk runs past its cap (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite").
 */
export const TIER_FIRST_CANDIDATES = 8_000;

/**
 * The listings that contain every term (as sqlite/search.ts allTermsTier), read from the rarest term's
 * rows; null when they do not fill the page, undefined when more than `maxCandidates` rows of the
 * rarest term may hold every term (then nothing is ranked).
 *
 * The other terms are checked by key lookups chained in a CASE, rarest first, each run only when
 * the ones before it found their term: as EXISTS conditions the planner turned them into a join
 * of the query's terms and searched its orders (85 ms of planning for 8 terms at load 6, more than
 * the execution), and a CASE also stops at the first term missing.
 */
async function allTermsTier(
  db: Db,
  terms: string[],
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
  maxCandidates?: number,
): Promise<RankedRow[] | null | undefined> {
  const tier = terms.length * 1_000_000;
  if (after && after.r < tier) return null;
  const counted = await termRowCounts(db, terms);
  // The query's signature bits (migration 4; terms.ts termSlots computes catalog_term_bit's bit):
  // a driver row whose revision signature lacks one surely lacks that term, so it is dropped inside
  // the index scan, before any key lookup; the lookups below then run only for the rows that may
  // hold every term (a shared bit is checked).
  const mask = BigInt.asIntN(
    64,
    terms.reduce((m, term) => m | (1n << BigInt(termSlots(term).bit)), 0n),
  ).toString();
  counted.sort((a, b) => a.n - b.n);
  const [driver, ...others] = counted;
  if (!driver || driver.n === 0) return null;
  const params = parameters();
  const { p } = params;
  const allTerms = p(terms);
  const rows = termRowConditions(filters, asOf, params);
  const signature = p(mask);
  const holdsOthers = others.length
    ? `CASE ${others.map((o) => `WHEN NOT EXISTS (SELECT 1 FROM search_terms o WHERE o.term = ${p(o.term)} AND o.rev = c.rev) THEN false`).join(' ')} ELSE true END`
    : 'true';
  const cap = maxCandidates === undefined ? '' : `LIMIT ${p(maxCandidates + 1)}`;
  const result = await db.query<{ candidates: string; listing_id: string | null; rank: string | null }>(
    `WITH c AS MATERIALIZED (
       SELECT t.rev, t.listing_id FROM search_terms t ${rows.join}
       WHERE t.term = ${p(driver.term)} AND (t.sig & ${signature}::bigint) = ${signature}::bigint AND ${rows.where} ${cap}
     ),
     n AS (SELECT count(*) AS candidates FROM c)
     SELECT n.candidates, m.listing_id, m.rank FROM n LEFT JOIN LATERAL (
       SELECT listing_id, rank FROM (
         SELECT c.listing_id,
           ${tier} + (SELECT ${roundedMilliSql('o.units')} FROM search_terms o WHERE o.rev = c.rev AND o.term = ANY(${allTerms}::text[])) AS rank
         FROM c WHERE ${maxCandidates === undefined ? '' : `n.candidates <= ${p(maxCandidates)} AND `}${holdsOthers}
       ) m ${keysetAfter(after, params)}
       ORDER BY rank DESC, listing_id ASC LIMIT ${p(want)}
     ) m ON true`,
    params.values,
  );
  if (maxCandidates !== undefined && Number(result.rows[0]!.candidates) > maxCandidates) return undefined;
  const found = result.rows.filter((r): r is { candidates: string; listing_id: string; rank: string } => r.listing_id !== null);
  return found.length >= want ? ranked(found) : null;
}

type ListingColumns = Omit<ListingRow, 'id'>;

/**
 * The threshold walk (sqlite/search.ts thresholdWalk) as the server-side function catalog_walk
 * (migrations.ts), in one statement with the catalog's sequence (unless a cursor pinned
 * one) and the listings of the page it returns. gaveUp when the walk passed its cap.
 */
async function walkedPage(
  db: Db,
  terms: string[],
  pinned: number | undefined,
  after: CursorState | undefined,
  want: number,
  now: Date,
): Promise<{ asOf: number; gaveUp: boolean; rows: RankedRow[]; byId: Map<number, ListingRow> }> {
  const result = await db.query<{ as_of: string; gave_up: boolean; listing_id: string | null; rank: string | null } & ListingColumns>(
    `WITH s AS (SELECT coalesce($2::bigint, (SELECT seq FROM catalog_seq WHERE id = 1)) AS as_of),
       w AS (SELECT s.as_of, c.listing_ids, c.ranks, c.gave_up FROM s, catalog_walk($1::text[], s.as_of, $3, $4, $5, $6, $7::int[]) c)
     SELECT w.as_of, w.gave_up, u.listing_id, u.rank, l.resource, l.type, l.x402_version, l.last_updated, l.body, q.calls, q.payers,
       l.liveness_status, l.liveness_checked_at, l.liveness_failing_since
     FROM w
       LEFT JOIN LATERAL unnest(w.listing_ids, w.ranks) WITH ORDINALITY AS u(listing_id, rank, ord) ON true
       LEFT JOIN listings l ON l.id = u.listing_id
       LEFT JOIN LATERAL (
         SELECT coalesce(sum(c.calls), 0)::int AS calls, coalesce(sum(c.payers), 0)::int AS payers
         FROM listing_calls c WHERE c.listing_id = u.listing_id AND c.day >= $8
       ) q ON true
     ORDER BY u.ord`,
    [terms, pinned ?? null, want, after?.r ?? null, after?.i ?? null, THRESHOLD_WALK_CAP, WALK_CHUNKS, windowStartDay(now)],
  );
  const first = result.rows[0]!;
  const rows: RankedRow[] = [];
  const byId = new Map<number, ListingRow>();
  for (const { as_of: _asOf, gave_up: _gaveUp, listing_id: id, rank, ...listing } of result.rows) {
    if (id === null || rank === null) continue;
    rows.push({ listing_id: Number(id), rank: Number(rank) });
    // As rowsById, a listing the join does not find is left out of the page.
    if (listing.body !== null) byId.set(Number(id), { ...listing, id: Number(id) });
  }
  return { asOf: Number(first.as_of), gaveUp: first.gave_up, rows, byId };
}

export async function searchPostgres(
  context: SearchContext,
  query: string,
  filters: DiscoveryFilters,
  page: { limit: number; cursor?: string },
  now: Date,
  x402Version: number,
  visibleSince?: string,
  failingBefore?: string,
): Promise<SearchPage> {
  if (query.trim() === '')
    throw new CatalogQueryError('svc_missing_search_query', 'The search query is missing or blank; pass a non-empty `query` parameter.');
  const beyondLimits = queryLimitViolation(query);
  if (beyondLimits !== undefined) throw new CatalogQueryError('svc_invalid_query_parameter', beyondLimits);
  const { secret } = context;
  const hash = bindingHash(query, filters);
  const after = page.cursor === undefined ? undefined : decodeCursor(secret, page.cursor, hash, now.getTime());
  const { db } = context;
  const queryTerms = distinctTerms(query);
  /** The search by resource URL (url-search.ts): when the text finds nothing, and every page of its walk. */
  const byUrl = (asOf: number, text: TermChoice) =>
    urlSearchPage(db, secret, context, {
      textAnswer: emptySearchPage(x402Version, text),
      queryTerms,
      filters,
      page,
      after,
      asOf,
      hash,
      now,
      x402Version,
      visibleSince,
      failingBefore,
    });
  if (after?.u === 1) {
    const pinned = pinnedUrlChoice(queryTerms, after);
    return holdsNul(filters) ? emptySearchPage(x402Version, pinned) : byUrl(after.a, pinned);
  }
  // The terms ranked over: the first page's (its cursor's), else the budget's choice (term-budget.ts).
  let choice: TermChoice;
  if (after?.k !== undefined) {
    const withRows = new Set((await termRowsUpTo(db, queryTerms, 1)).flatMap((n, i) => (n > 0 ? [queryTerms[i]!] : [])));
    choice = pinnedChoice(queryTerms, after, (term) => withRows.has(term))!;
  } else
    choice = await runChoiceAsync(
      chooseTerms(
        queryTerms,
        await chosenCommonTerms(db),
        context.searchRowBudget,
        queryTerms.length > MAX_SEARCHED_TERMS ? await listingCount(db) : undefined,
      ),
      ({ terms, cap }) => termRowsUpTo(db, terms, cap),
    );
  const terms = choice.searched;
  const answered = choiceFields(choice);
  const k = choiceIndexes(queryTerms, choice);
  if (holdsNul(filters)) return { x402Version, resources: [], partialResults: false, pagination: { limit: 0, cursor: null }, ...answered };
  /** The catalog's write sequence now: the snapshot a first page pins (asOf). */
  const currentSeq = async () => Number((await db.query<{ seq: string }>('SELECT seq FROM catalog_seq WHERE id = 1')).rows[0]!.seq);
  if (terms.length === 0) return byUrl(after?.a ?? (await currentSeq()), choice);

  // Unfiltered several-term queries walk first (the filters' conditions are not in the function).
  const walk = terms.length > 1 && filterConditions(filters, parameters().p) === 'TRUE';
  // The tiers and the aggregates read every row of their terms: those rows are narrowed to a small list key's listings
  // first (filter-driver.ts searchFilters), as a hashed set. Not for one term or the scans, which read in rank order
  // and stop (a set made one common word under a 5% filter read all its rows: 2.2 s at 100k), nor for two chosen common
  // words (their tier under a set of 5,000 listings: 1.7 s against 1.0 at 100k).
  const everyRowRead = terms.length > 1 && !walk && !(await chosenCommonTerms(db)).has(terms[0]!);
  // Filtered (docs/CATALOG.md "Search with filters"): from the rarest list key's listings when they are few and cheaper
  // than the text; else, when the text is not narrow either, from the window (filter-driver.ts).
  const budget = context.searchRowBudget ?? SEARCH_ROW_BUDGET;
  const { sets, driven, windowed } = await filterPlan(db, filters, terms, {
    budget,
    driverListings: context.filterDriverListings,
    want: page.limit + 1,
    after,
    url: { sample: context.urlSample, nowMs: now.getTime() },
  });
  const narrowed = everyRowRead ? sets : filters;
  /** Whether a page read from the window could not be sure of it: the answer then says so, and the cursor keeps to the window. */
  let partial = after?.p === 1;
  let asOf: number | undefined = after?.a;
  /** Ranked rows with their listings, as rankRows answers. */
  const withListings = async (rows: RankedRow[]) => ({
    rows,
    byId: await rowsById(
      db,
      rows.map((r) => r.listing_id),
      now,
    ),
  });
  /** The next `want` matches after `from`, ranked, with their listings; pins asOf on the first call. */
  const rankRows = async (from: CursorState | undefined, want: number): Promise<{ rows: RankedRow[]; byId: Map<number, ListingRow> }> => {
    if (driven || windowed) {
      asOf ??= await currentSeq();
      const bounded = driven
        ? { rows: searched('set_driven', await setDrivenRows(db, terms, sets, asOf, from, want)), exact: true }
        : searched('window', await windowRows(db, terms, filters, budget, asOf, from, want));
      if (!bounded.exact) partial = true;
      return withListings(bounded.rows);
    }
    // Three or more terms whose rarest fit the driver cap (natural sentences): the tiers read from
    // the rarest terms' rows (term-tiers.ts), as SQLite tries them before its walk. When the page
    // reaches below the tiers the cap allows (null), neither the all-terms tier nor the scans of
    // common words can fill it: the walk decides it, and the aggregates past its cap.
    // Otherwise three or more common words: the all-terms tier first. From MASK_SCAN_TERMS of them, from the
    // revisions whose common-term mask holds them all (catalog migration 21, common-terms-scan.ts),
    // when every one is chosen; else up to REVISION_SCAN_TERMS of them, from the revisions by their
    // share bound (revision-scan.ts); both with or without filters. Otherwise, or when the scan
    // hands over, unfiltered when few rows may hold every term (the walk of the most common words
    // runs past its cap). A tier found too small to fill the page is not read again below.
    let tierRows: RankedRow[] | null | undefined;
    const minRows = context.tierFirstMinRows ?? TIER_FIRST_MIN_ROWS;
    const counted = terms.length >= 3 ? await termRowCounts(db, terms) : [];
    if (counted.length > 0) {
      asOf ??= await currentSeq();
      tierRows = searched('term_tiers', await termTiersTier(db, counted, narrowed, asOf, from, want, context.tierDriverRows));
      if (tierRows) return withListings(tierRows);
    }
    const common = tierRows === undefined && counted.length > 0 && counted.every(({ n }) => n >= minRows);
    if (common && terms.length >= MASK_SCAN_TERMS) {
      asOf ??= await currentSeq();
      tierRows = searched('mask_scan', await commonTermsTier(db, terms, filters, asOf, from, want));
      if (tierRows) return withListings(tierRows);
    }
    if (common && tierRows === undefined && terms.length <= REVISION_SCAN_TERMS) {
      asOf ??= await currentSeq();
      tierRows = searched('revision_scan', await revisionScanTier(db, counted, filters, asOf, from, want));
      if (tierRows) return withListings(tierRows);
    }
    if (walk && common && tierRows === undefined) {
      asOf ??= await currentSeq();
      tierRows = searched('tier_first', await allTermsTier(db, terms, narrowed, asOf, from, want, TIER_FIRST_CANDIDATES));
      if (tierRows) return withListings(tierRows);
    }
    const walked = walk ? await walkedPage(db, terms, asOf, from, want, now) : undefined;
    asOf ??= walked?.asOf ?? (await currentSeq());
    if (walked && !walked.gaveUp) return searched('walk', walked);
    const rows =
      terms.length === 1
        ? searched('one_term', await oneTerm(db, terms[0]!, filters, asOf, from, want))
        : ((tierRows === null ? null : searched('all_terms_tier', await allTermsTier(db, terms, narrowed, asOf, from, want))) ??
          searched('aggregate', await aggregate(db, terms, narrowed, asOf, from, want)));
    return withListings(rows);
  };
  /** The cursor's state after `at` (a window's walk says so: `p`). */
  const position = (at: RankedRow): CursorState => ({
    ...{ v: 1, h: hash, a: asOf!, r: at.rank, i: at.listing_id, t: after?.t ?? now.getTime(), k },
    ...(partial ? { p: 1 } : {}),
  });
  const want = page.limit + 1;
  const kept: Array<{ row: RankedRow; listing: ListingRow }> = [];
  let from = after;
  let last: RankedRow | undefined;
  let exhausted = false;
  for (let round = 0; round < VISIBILITY_ROUNDS && kept.length < want && !exhausted; round++) {
    const batch = visibilityBatch(page.limit, round);
    const { rows, byId } = await rankRows(from, batch);
    exhausted = rows.length < batch;
    last = keepVisible(rows, byId, visibleSince, want, kept, failingBefore) ?? last;
    if (last) from = position(last);
  }
  // The text found nothing under the filters: the resource URLs are searched instead.
  if (after === undefined && kept.length === 0 && exhausted && !partial) return byUrl(asOf ?? (await currentSeq()), choice);
  const pageRows = kept.slice(0, page.limit);
  const resources = pageRows.map((k) => toDiscoveryResource(k.listing));
  // More follow when the page is full with one to spare, or when the rounds ended before the matches did.
  const more = kept.length > page.limit || (!exhausted && kept.length < want);
  const at = kept.length > page.limit ? pageRows.at(-1)!.row : last;
  const cursor = more && at ? encodeCursor(secret, position(at)) : null;
  // Stopped at the work budget: matches outside the window may be missing, so partialResults is true whatever follows.
  const method = partial ? { searchMethod: 'text_partial' as const } : {};
  return {
    x402Version,
    resources,
    partialResults: more || partial,
    pagination: { limit: resources.length, cursor },
    ...answered,
    ...method,
  };
}
