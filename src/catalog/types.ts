/**
 * The catalog's interface toward the HTTP layer. The catalog knows nothing of Stellar or Koa:
 * it receives the settled payload and requirements as plain JSON.
 */
import type { BazaarCode, ServiceCode } from '../codes.ts';

/** The `bazaar` entry of the EXTENSION-RESPONSES header (SPEC.md §4.2). Never `processing`. */
export type BazaarOutcome =
  | { status: 'success' }
  | { status: 'rejected'; rejectedReason: string; code: BazaarCode };

export interface SettledPayment {
  paymentPayload: Record<string, unknown>;
  paymentRequirements: Record<string, unknown>;
}

export interface DiscoveryFilters {
  type?: string;
  payTo?: string;
  scheme?: string;
  network?: string;
  extensions?: string;
  /** Exact canonical resource URL (list only): with type and toolName it selects one listing. */
  resource?: string;
  /** Exact MCP tool name (list only). */
  toolName?: string;
}

/** A discovery query the catalog refuses (maps to a 400 ErrorEnvelope). */
export class CatalogQueryError extends Error {
  constructor(
    readonly code: Extract<ServiceCode, 'svc_invalid_search_cursor' | 'svc_missing_search_query' | 'svc_invalid_query_parameter'>,
    message: string,
  ) {
    super(message);
    this.name = 'CatalogQueryError';
  }
}

export interface CatalogPort {
  /**
   * Run the catalog hook for a settlement that succeeded. Bounded, never rejects (schema
   * validation runs off the payment thread within its time budget).
   * Returns null when no `bazaar` extension was echoed or on an internal fault (then logged),
   * which means: omit the header.
   */
  recordSettlement(settled: SettledPayment): Promise<BazaarOutcome | null>;
  /** GET /discovery/resources (limit already clamped, offset validated). */
  list(filters: DiscoveryFilters, page: { limit: number; offset: number }): {
    x402Version: number;
    items: unknown[];
    pagination: { limit: number; offset: number; total: number };
  };
  /** GET /discovery/search; throws CatalogQueryError for a bad cursor or blank query. */
  search(query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }): {
    x402Version: number;
    resources: unknown[];
    partialResults: boolean;
    pagination: { limit: number; cursor: string | null };
  };
}

/** The log calls the catalog makes (a pino Logger satisfies it). */
export interface CatalogLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CatalogOptions {
  /** SQLite file; created with its schema when absent. */
  dbPath: string;
  logger: CatalogLogger;
  /** Time source for `lastUpdated` and cursor expiry (tests inject one). */
  clock?: () => Date;
  /** Hook time over which a warning is logged (default 250 ms, SPEC §4.6 item 9). */
  softBudgetMs?: number;
}

/** A CatalogPort that owns a database handle. */
export interface Catalog extends CatalogPort {
  close(): void;
}
