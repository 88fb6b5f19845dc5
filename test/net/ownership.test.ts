/**
 * Ownership from the origin (docs/CATALOG.md "Ownership and refresh"): the verdict on what a
 * resource's own server answered, with reasons naming it; and the claims on SQLite and Postgres —
 * a settlement of a new owner answers `processing` and lists nothing until its check passes, a
 * failed check is remembered (`rejected` with its code, visible to validate) until its retry time,
 * and a passed check by a new payTo takes the listing over. The probes themselves (address guard, bounds) are live-402's, tested with
 * validate and liveness; here the verdicts are given to the catalog as a checker gives them.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_PENDING_CLAIMS_PER_PAYTO,
  PENDING_RETRY_BASE_MS,
  REJECTED_RETRY_BASE_MS,
  type OwnershipClaim,
} from '../../src/catalog/ownership.ts';
import type { LiveProbe } from '../../src/net/live-402.ts';
import { ownershipVerdict } from '../../src/net/ownership.ts';
import { PAY_TO_A, PAY_TO_B, settlement, tempCatalog } from '../catalog/fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from '../catalog/fresh.ts';

const PAY_TO_C = 'GCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC';
const claim: OwnershipClaim = {
  key: '1',
  type: 'http',
  resource: 'https://api.example.com/users/:id',
  toolName: '',
  method: 'GET',
  pathParams: { id: '42' },
  payTo: PAY_TO_B,
  currentOwner: PAY_TO_A,
};
const payment = (...payTos: string[]): LiveProbe => ({
  kind: 'payment',
  required: {
    x402Version: 2,
    resource: { url: 'https://api.example.com/users/42' },
    accepts: payTos.map((payTo) => ({
      scheme: 'exact',
      network: 'stellar:testnet',
      amount: '1',
      asset: 'C',
      payTo,
      maxTimeoutSeconds: 60,
    })),
  },
});

describe('the verdict on what the origin answered', () => {
  it('passes only a 402 naming the claimant and no longer the owner; each failure names what was asked and answered', () => {
    expect(ownershipVerdict(claim, payment(PAY_TO_B))).toEqual({ passed: true });
    expect(ownershipVerdict({ ...claim, currentOwner: undefined }, payment(PAY_TO_C, PAY_TO_B))).toEqual({ passed: true });

    const other = ownershipVerdict(claim, payment(PAY_TO_A, PAY_TO_C));
    expect(other).toMatchObject({ passed: false, code: 'bazaar_origin_names_other_payee' });
    const reason = (other as { reason: string }).reason;
    expect(reason).toContain('GET https://api.example.com/users/42'); // asked with its pathParams, as a buyer would
    expect(reason).toContain(`name payTo ${PAY_TO_A}, ${PAY_TO_C}, not ${PAY_TO_B}`);
    expect(reason).toMatch(/settled but nothing was listed/);

    const both = ownershipVerdict(claim, payment(PAY_TO_A, PAY_TO_B));
    expect(both).toMatchObject({ passed: false, code: 'bazaar_listing_owned_by_other_payee' });
    expect((both as { reason: string }).reason).toContain(`names both the listing's owner ${PAY_TO_A} and ${PAY_TO_B}`);

    const free = ownershipVerdict(claim, { kind: 'free', answer: { status: 200, contentType: null, body: '', cut: false } });
    expect(free).toMatchObject({ passed: false, code: 'bazaar_origin_not_payable' });
    expect((free as { reason: string }).reason).toMatch(/without asking for payment/);
    const error = ownershipVerdict(claim, {
      kind: 'error',
      status: 400,
      reason: 'GET https://api.example.com/users/42 answered HTTP 400.',
    });
    expect(error).toMatchObject({ passed: false, code: 'bazaar_origin_not_payable' });
    expect((error as { reason: string }).reason).toContain('answered HTTP 400');
    for (const probe of [
      { kind: 'unreachable', reason: 'GET https://api.example.com/users/42 did not answer: fetch failed' },
      { kind: 'forbidden', reason: 'refused to connect: api.example.com resolves to 10.0.0.1' },
      { kind: 'redirect', reason: 'https://api.example.com/users/42 redirects to https://evil.example, another origin' },
    ] as LiveProbe[]) {
      const verdict = ownershipVerdict(claim, probe);
      expect(verdict).toMatchObject({ passed: false, code: 'bazaar_origin_unreachable' });
      expect((verdict as { reason: string }).reason).toContain((probe as { reason: string }).reason);
    }
    expect(
      ownershipVerdict({ ...claim, type: 'mcp', toolName: 'rate', resource: 'https://t.example.com/mcp' }, payment(PAY_TO_C)),
    ).toMatchObject({
      reason: expect.stringContaining("tools/call rate with svc's neutral arguments at https://t.example.com/mcp"),
    });
  });
});

const URL_ = 'https://owned.example.com/weather';
const shown = async (t: ReturnType<typeof tempCatalog>) => ({
  listed: (await t.catalog.list({}, { limit: 10, offset: 0 })).items.map((i) => [i.resource, i.accepts.map((a) => a.payTo)]),
  searched: (await t.catalog.search('weather', {}, { limit: 10 })).resources.map((r) => r.resource),
});
const checks = (t: ReturnType<typeof tempCatalog>) => t.catalog.ownershipChecks!({ resource: URL_, type: 'http' });

describe.each(BACKENDS)('claims on %s', (backend) => {
  const open = async () =>
    tempCatalog(undefined, { ownership: 'origin', databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });

  it('processing until the origin names the payTo; a failure is remembered, then asked again; a new payTo named takes over', async () => {
    const t = await open();
    try {
      const paid = (payTo: string, id: string) => ({
        ...settlement({ url: URL_, payTo, description: 'weather' }),
        payment: { payer: 'P', id },
      });
      // A first settlement: nothing listed yet, the claim is processing.
      expect(await t.catalog.recordSettlement(paid(PAY_TO_A, 'a1'))).toEqual({ status: 'processing' });
      expect(await t.catalog.recordSettlement(paid(PAY_TO_A, 'a2'))).toEqual({ status: 'processing' });
      expect(await shown(t)).toEqual({ listed: [], searched: [] });
      expect(await checks(t)).toMatchObject([{ payTo: PAY_TO_A, status: 'processing', checkedAt: null }]);
      // /metrics' svc_catalog_listings{state="pending"}: one resource waits, two payments or not.
      expect(await t.catalog.listingCounts!()).toMatchObject({ listed: 0, pending: 1, hidden: { expired: 0, liveness: 0 } });
      const due = await t.catalog.ownership!.claimDue(t.clock().getTime(), 10);
      expect(due).toMatchObject([{ resource: URL_, payTo: PAY_TO_A, method: 'GET' }]);
      expect(due[0]).not.toHaveProperty('input'); // a check never sends the example (docs/SECURITY.md)
      expect(due[0]!.currentOwner).toBeUndefined();
      expect(await t.catalog.ownership!.claimDue(t.clock().getTime(), 10)).toEqual([]); // leased: not taken twice
      expect(await t.catalog.ownership!.resolve(due[0]!.key, t.clock().getTime(), { passed: true })).toBe('listed');
      expect(await shown(t)).toEqual({ listed: [[URL_, [PAY_TO_A]]], searched: [URL_] });
      expect((await t.catalog.list({}, { limit: 1, offset: 0 })).items[0]!.quality.l30DaysTotalCalls).toBe(2); // both payments
      expect(await checks(t)).toEqual([]);
      expect(await t.catalog.listingCounts!()).toMatchObject({ listed: 1, pending: 0, hidden: { expired: 0, liveness: 0 } });
      // The owner's next settlement refreshes at once.
      expect(await t.catalog.recordSettlement(paid(PAY_TO_A, 'a3'))).toEqual({ status: 'success' });

      // Another payTo (a server declaring this URL): processing, then rejected by its origin's answer.
      t.tick();
      expect(await t.catalog.recordSettlement(paid(PAY_TO_B, 'b1'))).toEqual({ status: 'processing' });
      const [squat] = await t.catalog.ownership!.claimDue(t.clock().getTime(), 10);
      expect(squat).toMatchObject({ payTo: PAY_TO_B, currentOwner: PAY_TO_A });
      // A claim on a listed resource is no pending listing: the resource is listed under its owner.
      expect(await t.catalog.listingCounts!()).toMatchObject({ listed: 1, pending: 0, hidden: { expired: 0, liveness: 0 } });
      const verdict = { passed: false, code: 'bazaar_origin_names_other_payee', reason: 'it named GAAA.' } as const;
      expect(await t.catalog.ownership!.resolve(squat!.key, t.clock().getTime(), verdict)).toBe('rejected');
      expect(await shown(t)).toEqual({ listed: [[URL_, [PAY_TO_A]]], searched: [URL_] });
      const retryAfter = new Date(t.clock().getTime() + REJECTED_RETRY_BASE_MS).toISOString();
      expect(await checks(t)).toEqual([
        {
          payTo: PAY_TO_B,
          status: 'rejected',
          code: 'bazaar_origin_names_other_payee',
          reason: 'it named GAAA.',
          settledAt: t.clock().toISOString(),
          checkedAt: t.clock().toISOString(),
          retryAfter,
        },
      ]);
      // Its next settlement is rejected at once, with the reason and when svc asks again.
      const again = await t.catalog.recordSettlement(paid(PAY_TO_B, 'b2'));
      expect(again).toMatchObject({ status: 'rejected', code: 'bazaar_origin_names_other_payee' });
      expect((again as { rejectedReason: string }).rejectedReason).toContain(`it named GAAA. (checked ${t.clock().toISOString()}`);
      expect((again as { rejectedReason: string }).rejectedReason).toContain(retryAfter);
      // Validate's preview is not refused by the memory: it asks the origin itself.
      expect(await t.catalog.previewSettlement!(paid(PAY_TO_B, 'b3'))).toMatchObject({ outcome: 'listed', owner: PAY_TO_A });

      // After the retry time the origin is asked again; this time it names B only: B takes the listing over.
      t.tick(REJECTED_RETRY_BASE_MS + 1);
      expect(await t.catalog.recordSettlement(paid(PAY_TO_B, 'b4'))).toEqual({ status: 'processing' });
      const [rotate] = await t.catalog.ownership!.claimDue(t.clock().getTime(), 10);
      expect(await t.catalog.ownership!.resolve(rotate!.key, t.clock().getTime(), { passed: true })).toBe('listed');
      expect(await shown(t)).toEqual({ listed: [[URL_, [PAY_TO_B]]], searched: [URL_] });
      expect((await t.catalog.list({ payTo: PAY_TO_A }, { limit: 10, offset: 0 })).pagination.total).toBe(0);
      expect((await t.catalog.list({}, { limit: 1, offset: 0 })).items[0]!.quality.l30DaysTotalCalls).toBe(1); // A's payments went with A's listing
      expect(await t.catalog.recordSettlement(paid(PAY_TO_B, 'b5'))).toEqual({ status: 'success' });
      // A stale lease resolves nothing.
      expect(await t.catalog.ownership!.resolve(rotate!.key, t.clock().getTime(), { passed: true })).toBe('gone');
    } finally {
      t.close();
    }
  });

  it('an origin that did not answer is asked again twice, 5 s then 10 s later, before the claim is rejected', async () => {
    const t = await open();
    try {
      const unreachable = { passed: false, code: 'bazaar_origin_unreachable', reason: 'it did not answer.' } as const;
      expect(await t.catalog.recordSettlement(settlement({ url: URL_, payTo: PAY_TO_A }))).toEqual({ status: 'processing' });
      for (const [wait, resolution] of [
        [0, 'retried'],
        [PENDING_RETRY_BASE_MS, 'retried'],
        [2 * PENDING_RETRY_BASE_MS, 'rejected'],
      ] as const) {
        if (wait > 0) expect(await t.catalog.ownership!.claimDue(t.clock().getTime() + wait - 1, 10)).toEqual([]); // not due before its time
        t.tick(wait);
        const [due] = await t.catalog.ownership!.claimDue(t.clock().getTime(), 10);
        expect(await t.catalog.ownership!.resolve(due!.key, t.clock().getTime(), unreachable)).toBe(resolution);
        expect((await checks(t))[0]!.status).toBe(resolution === 'retried' ? 'processing' : 'rejected');
      }
    } finally {
      t.close();
    }
  });

  it("a settlement does not end a terms_changed run (the owner's server names another payTo): the listing is checked again at once", async () => {
    const t = await open();
    try {
      const url = 'https://moved.example.com/weather';
      const paid = () => settlement({ url, payTo: PAY_TO_A, description: 'weather' });
      expect(await t.catalog.recordSettlement(paid())).toEqual({ status: 'processing' });
      const [claimed] = await t.catalog.ownership!.claimDue(t.clock().getTime(), 10);
      await t.catalog.ownership!.resolve(claimed!.key, t.clock().getTime(), { passed: true });
      const [due] = await t.catalog.liveness!.claimDue(t.clock().getTime(), t.clock().getTime(), 10);
      const record = { status: 'terms_changed', checkedAt: t.clock().toISOString(), failingSince: t.clock().toISOString() } as const;
      await t.catalog.liveness!.writeLiveness(due!.key, record, t.clock().getTime());
      t.tick(3_600_000);
      expect(await t.catalog.recordSettlement(paid())).toEqual({ status: 'success' });
      expect((await t.catalog.list({}, { limit: 1, offset: 0 })).items[0]!.liveness).toEqual({
        status: 'terms_changed',
        checkedAt: record.checkedAt,
      });
      expect(await t.catalog.liveness!.claimDue(t.clock().getTime(), 0, 10)).toMatchObject([{ resource: url }]); // due at once
    } finally {
      t.close();
    }
  });

  it('one payTo holds at most 256 claims waiting: its next new claim is refused, another payTo still claims; the backlog is counted', async () => {
    const t = await open();
    try {
      for (let n = 0; n < MAX_PENDING_CLAIMS_PER_PAYTO; n++)
        expect(await t.catalog.recordSettlement(settlement({ url: `https://flood.example.com/p${n}`, payTo: PAY_TO_C }))).toEqual({
          status: 'processing',
        });
      const refused = await t.catalog.recordSettlement(settlement({ url: 'https://flood.example.com/more', payTo: PAY_TO_C }));
      expect(refused).toMatchObject({ status: 'rejected', code: 'bazaar_claims_backlog_full' });
      expect((refused as { rejectedReason: string }).rejectedReason).toMatch(
        /already has 256 claims waiting .* was settled but its claim was not recorded/,
      );
      // A claim it holds still takes its next payment; another payTo is not affected.
      expect(await t.catalog.recordSettlement(settlement({ url: 'https://flood.example.com/p0', payTo: PAY_TO_C }))).toEqual({
        status: 'processing',
      });
      expect(await t.catalog.recordSettlement(settlement({ url: URL_, payTo: PAY_TO_A }))).toEqual({ status: 'processing' });
      expect((await t.catalog.listingCounts!()).claims).toEqual({
        pending: MAX_PENDING_CLAIMS_PER_PAYTO + 1,
        oldestSettledAt: t.clock().toISOString(),
      });
    } finally {
      t.close();
    }
  }, 120_000);
});
