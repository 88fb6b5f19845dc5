/**
 * Prometheus metrics (GET /metrics, text format 0.0.4) with prom-client, on a registry of their
 * own so that every service instance (and every test) counts only itself. The payment path is
 * not edited to count: the scheme, the chain RPC and the catalog are wrapped at their ports, and
 * one middleware counts requests by route and status. Each metric is described in
 * docs/OPERATIONS.md.
 */
import type { Next } from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SchemaNotJudgedError, type CatalogPort } from '../catalog/types.ts';
import { KEPT_COUNTS, LIST_PATHS, SEARCH_PATHS, type TakenPath } from '../catalog/query-paths.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import type { PaymentScheme, SettlementGate } from '../scheme/types.ts';

/** Settle waits for a ledger close: buckets from a fast devnet to a slow network. */
const SETTLE_BUCKETS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 30, 60];
const RPC_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Hashes already counted in the sponsored-fee total (a reconciliation may read a SUCCESS again). */
const COUNTED_HASHES = 10_000;

export interface PoolGauge {
  /** Submitters carrying a settlement. */
  readonly busy: number;
  /** Settlements waiting for a free submitter. */
  readonly waiting: number;
}

/** The connection caps' counts (src/http/connection-cap.ts ConnectionTable). */
export interface ConnectionGauge {
  readonly size: number;
  readonly shed: { readonly evicted: number; readonly refused: number };
}

function sum<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((n, item) => n + value(item), 0);
}

/** A gauge that reads, when scraped, the sum of `value` over the watched items (servers). */
function summedGauge<T>(registry: Registry, name: string, help: string, items: readonly T[], value: (item: T) => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(sum(items, value));
    },
  });
}

/** A gauge with a `network` label that reads, when scraped, the sum of `value` over each network's watched pools. */
function gaugeByNetwork(
  registry: Registry,
  name: string,
  help: string,
  pools: readonly { pool: PoolGauge; network: string }[],
  value: (pool: PoolGauge) => number,
): void {
  new Gauge({
    name,
    help,
    labelNames: ['network'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const totals = new Map<string, number>();
      for (const { pool, network } of pools) totals.set(network, (totals.get(network) ?? 0) + value(pool));
      for (const [network, total] of totals) this.set({ network }, total);
    },
  });
}

/**
 * The network a scheme serves, for the `network` label: the first kind it reports (a label from
 * the scheme, never from a request, so that a caller cannot add label values).
 */
export function schemeNetwork(scheme: Pick<PaymentScheme, 'supported'>): string {
  return scheme.supported().kinds[0]?.network ?? 'none';
}

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by route (method and OpenAPI path) and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly verifyOutcomes = new Counter({
    name: 'svc_verify_outcomes_total',
    help: 'Verify decisions by network and code ("valid" or the invalidReason).',
    labelNames: ['network', 'code'] as const,
    registers: [this.registry],
  });
  readonly settleOutcomes = new Counter({
    name: 'svc_settle_outcomes_total',
    help: 'Settle results by network and code ("success" or the errorReason).',
    labelNames: ['network', 'code'] as const,
    registers: [this.registry],
  });
  readonly settleSeconds = new Histogram({
    name: 'svc_settle_duration_seconds',
    help: 'Time from the start of settle to its result, by network and outcome.',
    labelNames: ['network', 'outcome'] as const,
    buckets: SETTLE_BUCKETS,
    registers: [this.registry],
  });
  readonly rpcCalls = new Counter({
    name: 'svc_rpc_requests_total',
    help: 'Chain RPC calls by network, method and outcome (ok or error).',
    labelNames: ['network', 'method', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly rpcSeconds = new Histogram({
    name: 'svc_rpc_duration_seconds',
    help: 'Chain RPC call latency by network and method.',
    labelNames: ['network', 'method'] as const,
    buckets: RPC_BUCKETS,
    registers: [this.registry],
  });
  readonly catalogOutcomes = new Counter({
    name: 'svc_catalog_hook_outcomes_total',
    help: 'Catalog hook results after a settlement: success, the rejection code, none (no bazaar extension), not_judged (the seller schema could not be validated now; retried) or fault.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly catalogLifecycle = new Counter({
    name: 'svc_catalog_lifecycle_listings_total',
    help: 'Listings the catalog lifecycle pass acted on: hidden (taken out of the search index), restored (put back) or purged (deleted, hidden past LISTING_PURGE_DAYS).',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  readonly searchPaths = new Counter({
    name: 'svc_catalog_search_path_total',
    help: 'Searches answered, by catalog store and search path (each path that answered a search counted once; src/catalog/query-paths.ts names them).',
    labelNames: ['store', 'path'] as const,
    registers: [this.registry],
  });
  readonly listPaths = new Counter({
    name: 'svc_catalog_list_path_total',
    help: 'List pages answered, by catalog store and list path (src/catalog/query-paths.ts names them).',
    labelNames: ['store', 'path'] as const,
    registers: [this.registry],
  });
  readonly keptCounts = new Counter({
    name: 'svc_catalog_search_kept_counts_total',
    help: "Searches' first pages by what they found of their catalog reader's kept term counts: reused (opened at the write sequence they were read at) or forgotten (a write came between; src/catalog/query-paths.ts KEPT_COUNTS).",
    labelNames: ['store', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly sponsoredFees = new Counter({
    name: 'svc_sponsored_fees_stroops_total',
    help: 'Fees charged to svc accounts for settlements that reached SUCCESS, in stroops, by network.',
    labelNames: ['network'] as const,
    registers: [this.registry],
  });
  private readonly pools: { pool: PoolGauge; network: string }[] = [];
  private readonly connections: ConnectionGauge[] = [];
  private readonly counted = new Set<string>();

  constructor() {
    const { registry, pools, connections } = this;
    gaugeByNetwork(registry, 'svc_submitter_pool_in_use', 'Submitter accounts carrying an in-flight settlement.', pools, (p) => p.busy);
    gaugeByNetwork(registry, 'svc_submitter_pool_queued', 'Settlements waiting for a free submitter.', pools, (p) => p.waiting);
    summedGauge(
      registry,
      'svc_http_connections_open',
      'Open client connections, counted by the connection caps.',
      connections,
      (c) => c.size,
    );
    new Counter({
      name: 'svc_http_connections_shed_total',
      help: 'Connections closed by the caps: evicted (idle, of the busiest address, to admit a newcomer at MAX_CONNECTIONS) or refused (on accept).',
      labelNames: ['reason'] as const,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(
          { reason: 'evicted' },
          sum(connections, (c) => c.shed.evicted),
        );
        this.inc(
          { reason: 'refused' },
          sum(connections, (c) => c.shed.refused),
        );
      },
    });
    // Process metrics, including nodejs_eventloop_lag_seconds and its percentiles.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    // prom-client's gauges named like counters, which `promtool check metrics` refuses ("non-counter
    // metrics should not have _total suffix"): each is the sum of the gauge of the same name without
    // `_total`, by type (`sum(nodejs_active_handles)`).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
  }

  watchConnections(table: ConnectionGauge): void {
    this.connections.push(table);
  }

  /** Counts `pool`'s busy and waiting settlements under `network`. */
  watchPool(pool: PoolGauge, network: string): void {
    this.pools.push({ pool, network });
  }

  /** Counts the fee of a SUCCESS once per transaction hash. */
  sponsoredFee(hash: string, stroops: bigint | undefined, network: string): void {
    if (stroops === undefined || this.counted.has(hash)) return;
    this.counted.add(hash);
    if (this.counted.size > COUNTED_HASHES) this.counted.delete(this.counted.values().next().value as string);
    this.sponsoredFees.inc({ network }, Number(stroops));
  }

  /**
   * Counts the discovery paths `store`'s catalog threads report (CatalogOptions.onQueryPaths), every
   * path that store has exported from 0, so that a path no request takes shows as 0, not absent.
   */
  queryPaths(store: 'sqlite' | 'postgres'): (paths: TakenPath[]) => void {
    for (const [counter, paths] of [
      [this.searchPaths, SEARCH_PATHS],
      [this.listPaths, LIST_PATHS],
    ] as const)
      for (const [path, { stores }] of Object.entries(paths))
        if ((stores as readonly string[]).includes(store)) counter.inc({ store, path }, 0);
    for (const outcome of Object.keys(KEPT_COUNTS)) this.keptCounts.inc({ store, outcome }, 0);
    return (paths) => {
      for (const [kind, path] of paths)
        if (kind === 'kept_counts') this.keptCounts.inc({ store, outcome: path });
        else (kind === 'search' ? this.searchPaths : this.listPaths).inc({ store, path });
    };
  }

  /** Counts every answered request; mounted first so it sees the final status. */
  middleware(): SvcMiddleware {
    return async (ctx: SvcContext, next: Next) => {
      try {
        await next();
      } finally {
        const operation = ctx.state.operation;
        this.requests.inc({ route: operation ? `${ctx.method} ${operation.path}` : 'unmatched', status: String(ctx.status) });
      }
    };
  }

  /** GET /metrics. */
  handler(): SvcMiddleware {
    return async (ctx: SvcContext) => {
      ctx.status = 200;
      ctx.type = this.registry.contentType;
      ctx.body = await this.registry.metrics();
    };
  }
}

/** `target` with some methods replaced; every other member is read from (and bound to) the target itself. */
function override<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(t, property, receiver) {
      if (typeof property === 'string' && Object.hasOwn(overrides, property)) return overrides[property];
      const value: unknown = Reflect.get(t, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
}

/** The scheme with verify/settle outcomes and settle latency counted. */
export function instrumentScheme<S extends PaymentScheme>(scheme: S, metrics: ServiceMetrics): S {
  const network = schemeNetwork(scheme);
  return override(scheme, {
    verify: async (...args: Parameters<PaymentScheme['verify']>) => {
      const result = await scheme.verify(...args);
      metrics.verifyOutcomes.inc({ network, code: result.isValid ? 'valid' : String(result.invalidReason ?? 'invalid') });
      return result;
    },
    settle: async (...args: Parameters<PaymentScheme['settle']>) => {
      const stop = metrics.settleSeconds.startTimer({ network });
      const result = await scheme.settle(...args);
      const code = result.success ? 'success' : String(result.errorReason ?? 'failed');
      stop({ outcome: result.success ? 'success' : 'failure' });
      metrics.settleOutcomes.inc({ network, code });
      return result;
    },
  });
}

/**
 * The settlement journal with the settles it refuses itself counted: a journal that cannot read or
 * is waiting for a write to succeed answers `svc_journal_unavailable` without calling the scheme,
 * which instrumentScheme would never see. (A refusal the journal makes inside the scheme's settle,
 * before submission, is the scheme's result and counted there; copies answered from a record are
 * not new settle results.)
 */
export function instrumentGate<G extends SettlementGate>(gate: G, metrics: ServiceMetrics): G {
  return override(gate, {
    settle: async (request: Parameters<SettlementGate['settle']>[0]) => {
      let schemeCalled = false;
      const scheme = override(request.scheme, {
        settle: (...args: Parameters<PaymentScheme['settle']>) => {
          schemeCalled = true;
          return request.scheme.settle(...args);
        },
      });
      const outcome = await gate.settle({ ...request, scheme });
      if (!schemeCalled && outcome.result.errorReason === 'svc_journal_unavailable')
        metrics.settleOutcomes.inc({ network: schemeNetwork(request.scheme), code: 'svc_journal_unavailable' });
      return outcome;
    },
  });
}

/** Any object of async methods (the chain RPC port of `network`) with each call's latency and outcome counted. */
export function instrumentRpc<R extends object>(rpc: R, metrics: ServiceMetrics, network: string): R {
  return new Proxy(rpc, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return async (...args: unknown[]) => {
        const stop = metrics.rpcSeconds.startTimer({ network, method: property });
        try {
          const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          metrics.rpcCalls.inc({ network, method: property, outcome: 'ok' });
          const status = answer as { status?: string; feeCharged?: bigint } | undefined;
          if (property === 'getTransaction' && status?.status === 'SUCCESS')
            metrics.sponsoredFee(String(args[0]), status.feeCharged, network);
          return answer;
        } catch (err) {
          metrics.rpcCalls.inc({ network, method: property, outcome: 'error' });
          throw err;
        } finally {
          stop();
        }
      };
    },
  });
}

/** The catalog with its hook outcomes counted (sync or async ports alike). */
export function instrumentCatalog<C extends CatalogPort>(catalog: C, metrics: ServiceMetrics): C {
  type Outcome = { status: string; code?: string } | null;
  const count = (outcome: Outcome) =>
    metrics.catalogOutcomes.inc({
      outcome: outcome === null ? 'none' : outcome.status === 'success' ? 'success' : String(outcome.code ?? outcome.status),
    });
  // A seller schema svc had no time to validate is no fault of the catalog: the journal lists it
  // later (docs/CATALOG.md "Seller schemas"), and operators watch that rate apart from faults.
  const failed = (err: unknown) => metrics.catalogOutcomes.inc({ outcome: SchemaNotJudgedError.is(err) ? 'not_judged' : 'fault' });
  return override(catalog, {
    recordSettlement: (...args: Parameters<CatalogPort['recordSettlement']>) => {
      let result: unknown;
      try {
        result = catalog.recordSettlement(...args);
      } catch (err) {
        failed(err);
        throw err;
      }
      if (result instanceof Promise) {
        return result.then(
          (o: Outcome) => (count(o), o),
          (err: unknown) => {
            failed(err);
            throw err;
          },
        );
      }
      count(result as Outcome);
      return result;
    },
  });
}
