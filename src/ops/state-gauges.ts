/**
 * Gauges of svc's state, read when /metrics is scraped (docs/OPERATIONS.md "Metrics" and
 * "Alerts"): the native balance of every account that signs or pays for settlements, the
 * sponsored-fee budgets left today, and the journal's outcomes still pending. Each source is read
 * at most once per `maxAgeMs` (a scrape every few seconds must not become an RPC call each) and
 * within `timeoutMs`; a source that fails or is slow keeps its last values, and
 * `svc_state_read_failures_total` counts it. Balances and budgets carry the `network` they belong
 * to; the journal's pending outcomes are svc's, whatever the network.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ListingCounts } from '../catalog/types.ts';
import type { PayToSpending } from '../journal/types.ts';

/** The role of an account: submitter, channel (a derived channel account), fee_bump, channel_funder. */
export interface AccountBalance {
  network: string;
  account: string;
  role: 'submitter' | 'channel' | 'fee_bump' | 'channel_funder';
  /** Native balance in stroops; null when the account does not exist. */
  stroops: bigint | null;
}

/** Today's sponsored fees (UTC day) against the caps that bound them; a cap is null when off. */
export interface FeeBudgets {
  /** Each network's fees are counted apart. */
  network: string;
  /** FEE_BUDGET_DAILY_STROOPS and what counts against it. */
  daily: { spent: bigint; cap: bigint | null };
  /** FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS and what counts against it. */
  newPayTos: { spent: bigint; cap: bigint | null };
  /** FEE_BUDGET_PAYTO_DAILY_STROOPS (each payTo's own cap) and the payTos' spending, summed up. */
  payTo: { cap: bigint | null; spending: PayToSpending };
}

/** A payTo is near its cap from this share of FEE_BUDGET_PAYTO_DAILY_STROOPS on. */
export const PAYTO_NEAR_CAP_SHARE = 0.8;

/** The journal's unresolved records (submitted or unknown): how many, and the oldest one's creation (unix ms). */
export interface PendingOutcomes {
  count: number;
  oldestCreatedAt: number | null;
}

export interface StateSources {
  /** Each network's READY_MIN_BALANCE_STROOPS (GET /ready), exported beside the balances for the alert rules. */
  readyMinBalanceStroops: ReadonlyArray<{ network: string; stroops: number }>;
  balances?: () => Promise<AccountBalance[]>;
  feeBudgets?: () => Promise<FeeBudgets[]>;
  pending?: () => Promise<PendingOutcomes>;
  /** The catalog's listings by state (CatalogPort.listingCounts). */
  listings?: () => Promise<ListingCounts>;
  /** Listings whose liveness check is due now (absent when svc runs no liveness checks). */
  livenessDue?: () => Promise<number>;
}

/** One source read at most once per `maxAgeMs`, never waited on longer than `timeoutMs`. */
function cached<T>(read: () => Promise<T>, name: string, failures: Counter<'source'>, maxAgeMs: number, timeoutMs: number) {
  let last: T | undefined;
  let readAt = -Infinity;
  let inFlight: Promise<void> | null = null;
  return async (): Promise<T | undefined> => {
    if (Date.now() - readAt >= maxAgeMs) {
      inFlight ??= read()
        .then((value) => {
          last = value;
          readAt = Date.now();
        })
        .catch(() => failures.inc({ source: name }))
        .finally(() => (inFlight = null));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([inFlight, timedOut]);
      clearTimeout(timer);
    }
    return last;
  };
}

const asNumber = (stroops: bigint) => Number(stroops);

export function registerStateGauges(registry: Registry, sources: StateSources, { maxAgeMs = 10_000, timeoutMs = 2_000 } = {}): void {
  const failures = new Counter({
    name: 'svc_state_read_failures_total',
    help: 'Reads of a state gauge source (balances, fee_budgets, pending, listings, liveness_due) that failed; the gauges keep their last values.',
    labelNames: ['source'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'svc_ready_min_balance_stroops',
    help: 'READY_MIN_BALANCE_STROOPS: GET /ready fails when a paying account holds less.',
    labelNames: ['network'] as const,
    registers: [registry],
    collect() {
      for (const { network, stroops } of sources.readyMinBalanceStroops) this.set({ network }, stroops);
    },
  });
  if (sources.balances) {
    const balances = cached(sources.balances, 'balances', failures, maxAgeMs, timeoutMs);
    new Gauge({
      name: 'svc_account_balance_stroops',
      help: 'Native balance of each account that signs or pays for settlements, by public key and role (submitter, channel, fee_bump, channel_funder); 0 for an account that does not exist.',
      labelNames: ['network', 'account', 'role'] as const,
      registers: [registry],
      async collect() {
        const list = await balances();
        if (!list) return;
        this.reset();
        for (const b of list)
          this.set({ network: b.network, account: b.account, role: b.role }, b.stroops === null ? 0 : asNumber(b.stroops));
      },
    });
  }
  if (sources.feeBudgets) {
    const budgets = cached(sources.feeBudgets, 'fee_budgets', failures, maxAgeMs, timeoutMs);
    const read = async (gauge: Gauge<'network' | 'budget'>, value: (b: { spent: bigint; cap: bigint | null }) => number | null) => {
      const list = await budgets();
      if (!list) return;
      gauge.reset();
      for (const b of list)
        for (const [budget, entry] of [
          ['daily', b.daily],
          ['new_paytos', b.newPayTos],
        ] as const) {
          const v = value(entry);
          if (v !== null) gauge.set({ network: b.network, budget }, v);
        }
    };
    new Gauge({
      name: 'svc_fee_budget_remaining_stroops',
      help: 'Sponsored-fee budget left today (UTC) under each cap: daily (FEE_BUDGET_DAILY_STROOPS) and new_paytos (FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS); absent when the cap is off.',
      labelNames: ['network', 'budget'] as const,
      registers: [registry],
      async collect() {
        await read(this, (e) => (e.cap === null ? null : asNumber(e.cap > e.spent ? e.cap - e.spent : 0n)));
      },
    });
    new Gauge({
      name: 'svc_fee_budget_cap_stroops',
      help: 'Each sponsored-fee cap per UTC day (daily, new_paytos, and payto: each payTo its own); absent when off.',
      labelNames: ['network', 'budget'] as const,
      registers: [registry],
      async collect() {
        await read(this, (e) => (e.cap === null ? null : asNumber(e.cap)));
        for (const b of (await budgets()) ?? [])
          if (b.payTo.cap !== null) this.set({ network: b.network, budget: 'payto' }, asNumber(b.payTo.cap));
      },
    });
    // The per-payTo budgets as a summary with a fixed set of series (network × level), never a
    // series per payTo: payTos are chosen by whoever pays, so their number has no bound.
    new Gauge({
      name: 'svc_fee_budget_paytos',
      help: `PayTos sponsored today (UTC), by level: sponsored (any fee), near_cap (at least ${PAYTO_NEAR_CAP_SHARE * 100} % of FEE_BUDGET_PAYTO_DAILY_STROOPS), at_cap (refused until tomorrow); near_cap and at_cap absent when that cap is off.`,
      labelNames: ['network', 'level'] as const,
      registers: [registry],
      async collect() {
        const list = await budgets();
        if (!list) return;
        this.reset();
        for (const { network, payTo } of list) {
          this.set({ network, level: 'sponsored' }, payTo.spending.payTos);
          if (payTo.cap === null) continue;
          this.set({ network, level: 'near_cap' }, payTo.spending.nearCap);
          this.set({ network, level: 'at_cap' }, payTo.spending.atCap);
        }
      },
    });
    new Gauge({
      name: 'svc_fee_budget_payto_largest_stroops',
      help: 'The most sponsored fees any one payTo used today (UTC), against FEE_BUDGET_PAYTO_DAILY_STROOPS.',
      labelNames: ['network'] as const,
      registers: [registry],
      async collect() {
        const list = await budgets();
        if (!list) return;
        this.reset();
        for (const { network, payTo } of list) this.set({ network }, asNumber(payTo.spending.largest));
      },
    });
  }
  if (sources.listings) {
    const listings = cached(sources.listings, 'listings', failures, maxAgeMs, timeoutMs);
    new Gauge({
      name: 'svc_catalog_listings',
      help: 'Catalog listings by state: listed (in list and search now), pending (settled, waiting for the origin to name its payTo before the first listing) or hidden, with what hides it (reason: expired, past LISTING_TTL_DAYS; liveness, failing past LIVENESS_GRACE_HOURS).',
      labelNames: ['state', 'reason'] as const,
      registers: [registry],
      async collect() {
        const counts = await listings();
        if (!counts) return;
        this.set({ state: 'listed', reason: '' }, counts.listed);
        this.set({ state: 'pending', reason: '' }, counts.pending);
        for (const [reason, n] of Object.entries(counts.hidden)) this.set({ state: 'hidden', reason }, n);
      },
    });
    new Gauge({
      name: 'svc_ownership_claims_pending',
      help: 'Ownership claims waiting for their resource\'s server to be asked (docs/CATALOG.md "Ownership and refresh"): settled, not listed yet; at most 256 per payTo.',
      registers: [registry],
      async collect() {
        const b = (await listings())?.claims;
        if (b !== undefined) this.set(b.pending);
      },
    });
    new Gauge({
      name: 'svc_ownership_oldest_claim_age_seconds',
      help: 'Seconds since the settlement of the oldest ownership claim still waiting for its check (0 when none waits).',
      registers: [registry],
      async collect() {
        const b = (await listings())?.claims;
        if (b === undefined) return;
        const oldest = b.oldestSettledAt === null ? NaN : Date.parse(b.oldestSettledAt);
        this.set(Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
      },
    });
  }
  if (sources.livenessDue) {
    const due = cached(sources.livenessDue, 'liveness_due', failures, maxAgeMs, timeoutMs);
    new Gauge({
      name: 'svc_liveness_checks_due',
      help: 'Listings whose liveness check is due (LIVENESS_INTERVAL_HOURS passed since their last check or settlement) and not yet claimed.',
      registers: [registry],
      async collect() {
        const n = await due();
        if (n !== undefined) this.set(n);
      },
    });
  }
  if (sources.pending) {
    const pending = cached(sources.pending, 'pending', failures, Math.min(maxAgeMs, 5_000), timeoutMs);
    new Gauge({
      name: 'svc_journal_pending_outcomes',
      help: 'Journal records whose outcome is not known yet (submitted or unknown), waiting for reconciliation.',
      registers: [registry],
      async collect() {
        const p = await pending();
        if (p) this.set(p.count);
      },
    });
    new Gauge({
      name: 'svc_journal_oldest_pending_seconds',
      help: 'Age of the oldest journal record whose outcome is not known yet; 0 when none is.',
      registers: [registry],
      async collect() {
        const p = await pending();
        if (p) this.set(p.oldestCreatedAt === null ? 0 : Math.max(0, (Date.now() - p.oldestCreatedAt) / 1000));
      },
    });
  }
}
