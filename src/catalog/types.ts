/**
 * The catalog's interface toward the HTTP layer. The catalog knows nothing of Stellar or Koa:
 * it receives the settled payload and requirements as plain JSON.
 */
import type { BazaarCode, ServiceCode } from '../codes.ts';
import type { DiscoveryFilters } from '../filters.ts';
import type { components } from '../generated/openapi.ts';
import type { ListingDraft } from './ingest/settlement.ts';
import type { PaymentFacts } from './quality.ts';
import type { Awaitable } from './steps.ts';
import type { LivenessListing, LivenessRecord } from './liveness.ts';
import type { LifecycleBatch } from './lifecycle.ts';
import type {
  ClaimBacklog,
  ClaimOutcome,
  ClaimPick,
  ClaimResolution,
  OwnershipCheck,
  OwnershipClaim,
  OwnershipMode,
  OwnershipVerdict,
} from './ownership.ts';
import type { TakenPath } from './query-paths.ts';

/**
 * The `bazaar` entry of the EXTENSION-RESPONSES header (openapi.yaml, ExtensionResponses). `processing`: a claim the
 * origin's check decides after the settle answered (ownership.ts).
 */
export type BazaarOutcome =
  { status: 'success' } | { status: 'processing' } | { status: 'rejected'; rejectedReason: string; code: BazaarCode };

export interface SettledPayment {
  paymentPayload: Record<string, unknown>;
  paymentRequirements: Record<string, unknown>;
  /** Who paid and the payment's id, opaque: the quality signals count them (quality.ts). */
  payment?: PaymentFacts;
}

/** The filters are defined once, in src/filters.ts (from openapi.yaml). */
export type { DiscoveryFilters } from '../filters.ts';

/**
 * A list page's read. Left out: listings last settled before `visibleSince`, and listings failing their liveness
 * checks since before `failing` (undefined: nothing left out for that reason).
 */
export interface ListPageRead {
  filters: DiscoveryFilters;
  page: { limit: number; offset: number };
  now: Date;
  visibleSince: string | undefined;
  failing: string | undefined;
}

/** The hook could not judge the seller's schema now (svc busy); the listing is tried again later. */
export class SchemaNotJudgedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaNotJudgedError';
  }

  /** Recognized by name: it reaches the main thread from the catalog's writer thread as a copy. */
  static is(err: unknown): boolean {
    return (err as Error | undefined)?.name === 'SchemaNotJudgedError';
  }
}

/** A discovery query the catalog refuses: the caller's mistake (400), or the catalog cannot answer now (503). */
export class CatalogQueryError extends Error {
  readonly code: CatalogQueryCode;
  readonly status: 400 | 503;

  constructor(code: CatalogQueryCode, message: string) {
    super(message);
    this.name = 'CatalogQueryError';
    this.code = code;
    this.status = code === 'svc_catalog_busy' || code === 'svc_catalog_unavailable' ? 503 : 400;
  }
}

export type CatalogQueryCode = Extract<
  ServiceCode,
  'svc_invalid_search_cursor' | 'svc_missing_search_query' | 'svc_invalid_query_parameter' | 'svc_catalog_busy' | 'svc_catalog_unavailable'
>;

/** What a settlement would do to the catalog (CatalogPort.previewSettlement). */
export type ListingPreview =
  | {
      outcome: 'listed';
      listing: DiscoveryResource;
      dropped: string[];
      /** The listing's owner now, when another payTo owns it (ownership from the origin decides a takeover). */
      owner?: string;
    }
  | { outcome: 'rejected'; code: BazaarCode; reason: string }
  /** No `bazaar` extension. */
  | { outcome: 'none' }
  /** The seller schema could not be judged now (svc busy). */
  | { outcome: 'not_judged'; reason: string };

/**
 * POST /discovery/delist (docs/CATALOG.md "Withdrawing a listing"), its signature already checked by the caller:
 * the catalog compares owners and times only.
 */
export interface Withdrawal {
  resource: string;
  type: string;
  toolName: string;
  /** The payTo that signed: it must be the listing's owner. */
  owner: string;
  /** Signing time (epoch ms): must be later than the last withdrawal accepted for the listing. */
  issuedAtMs: number;
}

/** Anything but `delisted` changed nothing. */
export type WithdrawalOutcome =
  | { status: 'delisted' }
  | { status: 'unknown' }
  | { status: 'not_owner'; owner: string }
  /** A withdrawal of this listing signed at `lastIssuedAtMs` (not earlier than this one) was already accepted. */
  | { status: 'replayed'; lastIssuedAtMs: number };

/**
 * How long an accepted withdrawal's time is remembered: a message is stale 5 minutes after it was
 * signed (src/handlers/delist.ts), so a replay needs no memory after that; twice as long covers
 * instances whose clocks differ.
 */
export const WITHDRAWAL_MEMORY_MS = 10 * 60_000;

/** A hook's fault resolves null (header omitted) or, `strict`, rejects. */
interface HookOptions {
  strict?: boolean;
}

/**
 * Who a discovery request is for: an opaque key (the HTTP layer gives the client's peer address). Requesters
 * take turns in the reader queue (docs/CATALOG.md "Threads").
 */
export interface Requester {
  client: string;
}

export interface CatalogPort {
  /**
   * The catalog hook for a settlement that succeeded, under a deadline. Resolves null (omit the header) when no
   * `bazaar` extension was echoed, or on a fault or overload (logged). With `strict` a fault or overload rejects
   * instead, so the settlement journal keeps the payment unlisted and tries again.
   */
  recordSettlement(settled: SettledPayment, options?: HookOptions): Promise<BazaarOutcome | null>;
  /**
   * POST /discovery/validate: the judgment recordSettlement would make (the same code, the current owner
   * included), without writing. Optional for test catalogs, as are the other optional members here.
   */
  previewSettlement?(settled: SettledPayment): Promise<ListingPreview>;
  /**
   * POST /discovery/delist: removes the listing with its quality signals and owner binding when `owner` owns it
   * and no withdrawal signed at the same time or later was accepted for it.
   */
  withdraw?(withdrawal: Withdrawal): Promise<WithdrawalOutcome>;
  /**
   * Created with the catalog's database, shared by every instance on it: a withdrawal's signed text names it, so a
   * message signed for one catalog withdraws nothing from another.
   */
  catalogId?(): Promise<string>;
  /**
   * A settlement is under way: boot the writer thread while the chain settles, so the boot is not on the settle's
   * path. Returns at once and never throws.
   */
  prepareSettlement?(): void;
  /** POST /discovery/validate's `index`: whether the listing is in list and search now, and what hides it when not. */
  listingIndex?(
    identity: { resource: string; type: 'http' | 'mcp'; toolName?: string },
    requester?: Requester,
  ): Promise<ListingIndexStatus>;
  /** Listings by state, for the /metrics gauges (docs/OPERATIONS.md "Metrics"). */
  listingCounts?(): Promise<ListingCounts>;
  /** GET /discovery/resources (limit already clamped, offset validated). */
  list(filters: DiscoveryFilters, page: { limit: number; offset: number }, requester?: Requester): Promise<ListPage>;
  /** GET /discovery/search; rejects with CatalogQueryError (a bad cursor or query, or `svc_catalog_busy`). */
  search(query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }, requester?: Requester): Promise<SearchPage>;
  /**
   * list and search as the page's JSON text (JSON.stringify of the same page), serialized on the catalog's thread
   * so the main thread does not: what the GET routes send.
   */
  listJson?(filters: DiscoveryFilters, page: { limit: number; offset: number }, requester?: Requester): Promise<string>;
  searchJson?(query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }, requester?: Requester): Promise<string>;
  /** The liveness records (docs/CATALOG.md "Liveness"), on the catalog's low-priority reader threads. */
  liveness?: CatalogLiveness;
  /**
   * The ownership claims (docs/CATALOG.md "Ownership and refresh"), present when ownership comes from the origin:
   * src/net/ownership.ts takes due claims, asks each resource's server and resolves them.
   */
  ownership?: CatalogOwnership;
  /** One batch of the lifecycle pass (docs/CATALOG.md "Lifecycle"), on the writer thread. */
  maintainLifecycle?(): Promise<LifecycleBatch>;
  /**
   * Takes `host`'s slot for one outbound request (probe-hosts.ts), shared by every instance: 0 when taken, else when
   * the host may next be asked (epoch ms).
   */
  reserveProbeHost?(host: string, intervalMs: number, sent?: boolean): Promise<number>;
  /** POST /discovery/recheck: `payTo`'s pending or rejected claim on the listing due now; false when it holds none. */
  recheckClaim?(identity: { resource: string; type: 'http' | 'mcp'; toolName?: string }, payTo: string): Promise<boolean>;
  /** POST /discovery/validate's `ownership`: the claims of this identity svc holds (none when ownership is first-settlement). */
  ownershipChecks?(identity: { resource: string; type: 'http' | 'mcp'; toolName?: string }): Promise<OwnershipCheck[]>;
}

/** ownership.ts OwnershipStorePort, asynchronous. */
export interface CatalogOwnership {
  claimDue(now: number, limit: number, pick?: ClaimPick): Promise<OwnershipClaim[]>;
  /** Optional: without it the checker runs on its timer. */
  nextDue?(): Promise<number | null>;
  resolve(key: string, claimedAt: number, verdict: OwnershipVerdict): Promise<ClaimResolution>;
}

/** A new state (one more hiding reason) is one more field here and one more gauge series. */
export interface ListingCounts {
  listed: number;
  /** Waiting for the origin's check before their first listing. */
  pending: number;
  hidden: { expired: number; liveness: number };
  /** The ownership claims waiting for their checks (the backlog gauges); absent when ownership is first-settlement. */
  claims?: ClaimBacklog;
}

/** liveness.ts LivenessStorePort, asynchronous. */
export interface CatalogLiveness {
  claimDue(now: number, dueBefore: number, limit: number): Promise<LivenessListing[]>;
  writeLiveness(key: string, record: LivenessRecord, claimedAt: number, basis?: number): Promise<void>;
  postponeLiveness(keys: string[], basis: number, claimedAt: number): Promise<void>;
  /** Listings due for a check, for the /metrics gauge. */
  countDue?(dueBefore: number): Promise<number>;
}

/** Whether a listing is listed now (openapi.yaml, ListingIndexStatus). */
type ListingIndexStatus = components['schemas']['ListingIndexStatus'];
/** One listing as discovery answers it (openapi.yaml, DiscoveryResource). */
export type DiscoveryResource = components['schemas']['DiscoveryResource'];
/** GET /discovery/resources' body (openapi.yaml, DiscoveryListResponse). */
export type ListPage = components['schemas']['DiscoveryListResponse'];
/** GET /discovery/search's body (openapi.yaml, DiscoverySearchResponse). */
export type SearchPage = components['schemas']['DiscoverySearchResponse'];

/** A pino Logger satisfies it. */
export interface CatalogLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CatalogOptions {
  /** SQLite file; created with its schema when absent. Unused when databaseUrl is set. */
  dbPath: string;
  /** PostgreSQL URL (DATABASE_URL), shared by every svc instance. It may hold a password: never log it. */
  databaseUrl?: string | undefined;
  logger: CatalogLogger;
  /** Time source for `lastUpdated` and cursor expiry (tests inject one). */
  clock?: () => Date;
  /** Days without a settlement after which a listing is hidden, not deleted, until its next one (LISTING_TTL_DAYS, default 30). */
  listingTtlDays?: number;
  /** A listing hidden (by age or by failures) for this many days more is deleted (LISTING_PURGE_DAYS, default 90). */
  listingPurgeDays?: number;
  /** Failing liveness checks for longer than this hides a listing (LIVENESS_GRACE_HOURS). Absent: failures hide nothing. */
  livenessGraceMs?: number;
  /**
   * LISTING_OWNERSHIP: `origin` (the port then has `ownership`, which a checker must run: src/net/ownership.ts) or
   * `first-settlement`, the default here for catalogs opened without a checker.
   */
  ownership?: OwnershipMode;
  /** Hook time over which a warning is logged (default 250 ms). */
  softBudgetMs?: number;
  /**
   * Reader threads kept running (default 0; the writer is one more). More start on demand, up to 2 in all (or one
   * more than this), each stopped when idle (index.ts DEFAULT_READERS). Heavy searches run on all readers but one,
   * so light requests always find a free reader.
   */
  readers?: number;
  /** Discovery requests waiting for a reader beyond this are refused with svc_catalog_busy (default 64). */
  maxQueuedReads?: number;
  /** Settlement writes waiting beyond this are skipped: header omitted (default 256). */
  maxQueuedWrites?: number;
  /** A discovery request not answered within this is refused with svc_catalog_busy (default 2000 ms). */
  readDeadlineMs?: number;
  /** A hook not answered within this resolves null: header omitted (default 2000 ms). */
  writeDeadlineMs?: number;
  /**
   * Wall-clock bound of a seller schema's validation (default 200 ms). Tests on a busy machine raise it: a starved
   * validation thread gets `not_judged` (the write is left for later), which a test would read as a lost write. The
   * CPU budget still applies.
   */
  schemaWallMs?: number;
  /**
   * A warm standby thread beside the seller-schema validator's current one (default true). Per-test catalogs turn
   * it off: a standby is a thread start that only a terminated or retired thread uses.
   */
  schemaStandby?: boolean;
  /** Hears the discovery paths each answered request took (query-paths.ts), for the /metrics counters. */
  onQueryPaths?: (paths: TakenPath[]) => void;
}

export type { Awaitable };

/**
 * The storage a catalog worker runs against: SQLite (sqlite/store.ts) or PostgreSQL (postgres/store.ts).
 * Each call may return a Promise; neither the worker protocol nor the handlers depend on which.
 */
export interface CatalogStorePort {
  /** Ownership claims (ownership.ts), used when ownership comes from the origin. */
  readonly claims?: OwnershipStorePort;
  ownerOf(resource: string, type: string, toolName: string): Awaitable<string | undefined>;
  /** The ownership check and the write, atomically, with the payment counted in the listing's quality signals. */
  writeListing(draft: ListingDraft, now: Date, payment?: PaymentFacts): Awaitable<WriteOutcome>;
  /** Removes a listing its owner withdrew, atomically with the owner and replay checks (CatalogPort.withdraw). */
  withdraw(withdrawal: Withdrawal, now: Date): Awaitable<WithdrawalOutcome>;
  catalogId(): Awaitable<string>;
  list(...args: ListArgs): Awaitable<StoreListPage>;
  search(...args: SearchArgs): Awaitable<SearchPage>;
  close(): void;
}

/** `visibleSince`, `failingBefore`: what is hidden, as ListPageRead's `visibleSince` and `failing`. */
export type ListArgs = [
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince?: string,
  failingBefore?: string,
];
export type StoreListPage = { items: DiscoveryResource[]; total: number; partialResults?: boolean };
export type SearchArgs = [
  query: string,
  filters: DiscoveryFilters,
  page: { limit: number; cursor?: string },
  now: Date,
  x402Version: number,
  visibleSince?: string,
  failingBefore?: string,
];

export type WriteOutcome =
  | { status: 'written'; created: boolean; listingId: number }
  | { status: 'owned_by_other' }
  /** The listing already holds MAX_ACCEPTS_PER_LISTING distinct terms and these are new. */
  | { status: 'accepts_full' };

export interface Catalog extends CatalogPort {
  listJson: NonNullable<CatalogPort['listJson']>;
  searchJson: NonNullable<CatalogPort['searchJson']>;
  close(): Promise<void>;
}

/** Thrown when the database file is gone, replaced or read-only: the catalog cannot serve. */
export class CatalogUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogUnavailableError';
  }
}

/** A listing's identity as the stores key it (an HTTP listing's toolName is ''). */
export type Identity = { resource: string; type: string; toolName: string };

/** A store's ownership claims (claims.ts; ownership.ts), as the catalog's writer uses them. */
export interface OwnershipStorePort {
  /** A settlement's write when its payTo owns the listing, else its claim (or a remembered rejection), atomically. */
  writeOrClaim(draft: ListingDraft, now: Date, payment: PaymentFacts): Awaitable<WriteOutcome | ClaimOutcome>;
  /** A failed check of this payTo that still answers `rejected` at `nowMs`. */
  rememberedRejection(identity: Identity, payTo: string, nowMs: number): Awaitable<{ code: BazaarCode; reason: string } | undefined>;
  claimChecks(now: number, limit: number, pick?: ClaimPick): Awaitable<OwnershipClaim[]>;
  /** The pending claims and the oldest one's settlement time (the /metrics backlog gauges). */
  backlog(): Awaitable<ClaimBacklog>;
  /** Takes a host's slot for any check request, not only claims' (probe-hosts.ts): 0 when taken, else its next time. */
  reserveHost(host: string, nowMs: number, intervalMs: number, sent?: boolean): Awaitable<number>;
  /** A pending or rejected claim of `payTo` with its draft made due now (POST /discovery/recheck); false when there is none. */
  recheck(identity: Identity, payTo: string): Awaitable<boolean>;
  /** When the earliest pending claim is due (null: none), so a checker wakes for a claim postponed to its host's slot. */
  nextDue(): Awaitable<number | null>;
  resolve(key: string, claimedAt: number, verdict: OwnershipVerdict, now: Date): Awaitable<ClaimResolution>;
  checksOf(identity: Identity): Awaitable<OwnershipCheck[]>;
  /** Resources waiting for their first owner: a pending claim and no listing yet (the /metrics `pending` state). */
  countPending(): Awaitable<number>;
}
