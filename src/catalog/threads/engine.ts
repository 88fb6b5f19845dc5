/**
 * The catalog's operations over a CatalogStorePort, as a catalog worker runs them (worker.ts).
 * The settle hook never throws: a client defect is a `rejected` outcome with its code, an
 * internal fault (busy, read-only, deleted file, a bug) is logged and gives null so the header is
 * omitted. list/search throw on a fault (the HTTP layer makes that a 500).
 */
import { BAZAAR_CODES } from '../../codes.ts';
import {
  MAX_ACCEPTS_PER_LISTING,
  OWNED_BY_OTHER_REASON,
  ingestSettlement,
  ownedByOtherReason,
  type IngestResult,
  type StandingLookup,
} from '../ingest/settlement.ts';
import type { ClaimPick, ClaimResolution, OwnershipCheck, OwnershipClaim, OwnershipMode, OwnershipVerdict } from '../ownership.ts';
import { draftItem } from '../listing.ts';
import {
  SchemaNotJudgedError,
  type BazaarOutcome,
  type CatalogLogger,
  type CatalogStorePort,
  type DiscoveryFilters,
  type Identity,
  type ListArgs,
  type ListPage,
  type ListingPreview,
  type SearchPage,
  type SettledPayment,
  type OwnershipStorePort,
} from '../types.ts';
import { X402_VERSION } from '../../scheme/types.ts';
import { schemaThreadBootWait } from '../ingest/schema.ts';

/** Over this the hook logs a warning, nothing fails (docs/CATALOG.md "The settle hook"). */
export const SOFT_BUDGET_MS = 250;
/** The x402Version the discovery responses declare. */
export const DISCOVERY_X402_VERSION = X402_VERSION;

export class CatalogEngine {
  /** Present when ownership comes from the origin (../ownership.ts): settlements of a new owner become claims. */
  private readonly claims: OwnershipStorePort | undefined;

  constructor(
    private readonly store: CatalogStorePort,
    private readonly logger: CatalogLogger,
    private readonly softBudgetMs = SOFT_BUDGET_MS,
    ownership: OwnershipMode = 'first-settlement',
  ) {
    this.claims = ownership === 'origin' ? store.claims : undefined;
  }

  /** The claims port, or an error where ownership is first-settlement (nothing claims then). */
  private get ownership(): OwnershipStorePort {
    if (!this.claims) throw new Error('this catalog takes the first settlement as owner: it holds no ownership claims');
    return this.claims;
  }

  claimOwnershipChecks(now: number, limit: number, pick?: ClaimPick): Promise<OwnershipClaim[]> {
    return Promise.resolve(this.ownership.claimChecks(now, limit, pick));
  }

  resolveOwnershipCheck(key: string, claimedAt: number, verdict: OwnershipVerdict, now: Date): Promise<ClaimResolution> {
    return Promise.resolve(this.ownership.resolve(key, claimedAt, verdict, now));
  }

  async ownershipChecks(identity: Identity): Promise<OwnershipCheck[]> {
    return this.claims ? this.claims.checksOf(identity) : [];
  }

  /** `strict`: a fault rejects after it is logged, instead of answering null (CatalogPort). */
  async recordSettlement(settled: SettledPayment, now: Date, strict = false): Promise<BazaarOutcome | null> {
    const started = performance.now();
    let outcome: BazaarOutcome | null = null;
    let result = 'none';
    let notJudged: string | undefined;
    try {
      const ingested = await this.judge(settled, started, now);
      if (ingested.kind === 'rejected') {
        result = ingested.code;
        outcome = { status: 'rejected', rejectedReason: ingested.reason || BAZAAR_CODES[ingested.code], code: ingested.code };
      } else if (ingested.kind === 'not_judged') {
        // A transient failure, not a verdict on the seller: the journal lists it on a later try.
        result = 'not_judged';
        notJudged = ingested.reason;
        this.logger.warn({ reason: ingested.reason }, 'seller schema not validated now; EXTENSION-RESPONSES omitted');
      } else if (ingested.kind === 'unusable') {
        result = 'fault';
        this.logger.error({ reason: ingested.reason }, 'catalog hook could not use the settlement; EXTENSION-RESPONSES omitted');
      } else if (ingested.kind === 'listing') {
        const { draft } = ingested;
        // The owner is checked again here, atomically with the write: it may have changed since the early check.
        // From the origin: a payTo that does not own the listing claims it, and a checker asks the origin.
        const written = this.claims
          ? await this.claims.writeOrClaim(draft, now, settled.payment ?? {})
          : await this.store.writeListing(draft, now, settled.payment);
        if (written.status === 'pending') {
          result = 'processing';
          outcome = { status: 'processing' };
        } else if (written.status === 'rejected') {
          result = written.code;
          outcome = { status: 'rejected', rejectedReason: written.reason, code: written.code };
        } else if (written.status === 'owned_by_other') {
          result = 'bazaar_listing_owned_by_other_payee';
          outcome = { status: 'rejected', rejectedReason: OWNED_BY_OTHER_REASON, code: 'bazaar_listing_owned_by_other_payee' };
        } else if (written.status === 'accepts_full') {
          result = 'bazaar_accepts_too_large';
          outcome = {
            status: 'rejected',
            rejectedReason: `The listing already carries ${MAX_ACCEPTS_PER_LISTING} distinct accepted terms; these new terms were not added.`,
            code: 'bazaar_accepts_too_large',
          };
        } else {
          result = written.created ? 'created' : 'refreshed';
          outcome = { status: 'success' };
          if (draft.dropped.length > 0)
            this.logger.warn({ resource: draft.resource, dropped: draft.dropped }, 'catalog dropped invalid fields');
        }
      }
    } catch (err) {
      result = 'fault';
      outcome = null;
      this.logger.error(
        { err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } },
        'catalog hook fault; EXTENSION-RESPONSES omitted',
      );
      if (strict) throw err;
    }
    // The seller-schema thread's first boot, when this hook waited for it, is the thread's start-up, not the hook's cost.
    const elapsedMs = performance.now() - started - schemaThreadBootWait(started);
    if (elapsedMs > this.softBudgetMs)
      this.logger.warn({ elapsedMs: Math.round(elapsedMs), result }, 'catalog hook exceeded its soft budget');
    if (strict && notJudged !== undefined) throw new SchemaNotJudgedError(notJudged);
    return outcome;
  }

  /**
   * The checks of a settlement's listing, against its standing: one code path for record and
   * preview. First-settlement ownership: another owner refuses it. From the origin: a failed check
   * still remembered for its payTo refuses a settlement (a preview asks the origin itself, so it
   * is not refused by one).
   */
  private judge(settled: SettledPayment, started: number, now: Date, preview = false): Promise<IngestResult> {
    const claims = this.claims;
    const standing: StandingLookup = claims
      ? (resource, type, toolName, payTo) =>
          preview ? undefined : claims.rememberedRejection({ resource, type, toolName }, payTo, now.getTime())
      : async (resource, type, toolName, payTo) => {
          const owner = await this.store.ownerOf(resource, type, toolName);
          if (owner === undefined || owner === payTo) return undefined;
          const key = type === 'mcp' ? `${resource} tool ${toolName}` : resource;
          return { code: 'bazaar_listing_owned_by_other_payee', reason: ownedByOtherReason(key, owner, payTo) };
        };
    return ingestSettlement(settled.paymentPayload, settled.paymentRequirements, standing, started);
  }

  /** What recordSettlement would do with this settlement, without writing (CatalogPort.previewSettlement). */
  async previewSettlement(settled: SettledPayment, now: Date): Promise<ListingPreview> {
    const ingested = await this.judge(settled, performance.now(), now, true);
    switch (ingested.kind) {
      case 'none':
        return { outcome: 'none' };
      case 'rejected':
        return { outcome: 'rejected', code: ingested.code, reason: ingested.reason || BAZAAR_CODES[ingested.code] };
      case 'not_judged':
        return { outcome: 'not_judged', reason: ingested.reason };
      case 'unusable':
        throw new Error(`the settlement cannot be used: ${ingested.reason}`);
      case 'listing': {
        const { draft } = ingested;
        const owner = this.claims ? await this.store.ownerOf(draft.resource, draft.type, draft.toolName) : undefined;
        return {
          outcome: 'listed',
          listing: draftItem(draft, now),
          dropped: draft.dropped,
          ...(owner !== undefined && owner !== draft.owner ? { owner } : {}),
        };
      }
    }
  }

  async list(...[filters, page, now, visibleSince, failingBefore]: ListArgs): Promise<ListPage> {
    const { items, total, partialResults } = await this.store.list(filters, page, now, visibleSince, failingBefore);
    return {
      x402Version: DISCOVERY_X402_VERSION,
      items,
      pagination: { limit: page.limit, offset: page.offset, total },
      ...(partialResults === undefined ? {} : { partialResults }),
    };
  }

  async search(
    query: string,
    filters: DiscoveryFilters,
    page: { limit: number; cursor?: string },
    now: Date,
    visibleSince?: string,
    failingBefore?: string,
  ): Promise<SearchPage> {
    const found = await this.store.search(query, filters, page, now, DISCOVERY_X402_VERSION, visibleSince, failingBefore);
    // `pagination.limit` is the page size, as on the list (openapi.yaml DiscoverySearchResponse).
    return { ...found, pagination: { ...found.pagination, limit: page.limit } };
  }

  close(): void {
    this.store.close();
  }
}
