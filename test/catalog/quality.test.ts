/**
 * Quality signals (docs/CATALOG.md "Quality signals"; openapi.yaml ListingQuality), on SQLite and
 * on PostgreSQL: calls and distinct payers over the 30-day window and the last paid time, kept at
 * settle time; a payment counted once however often its hook runs; the window sliding by days;
 * several instances on one Postgres database counting one listing's payments exactly.
 */
import { describe, expect, it } from 'vitest';
import type { SettledPayment } from '../../src/catalog/types.ts';
import { PAY_TO_A, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogPerTest } from './fresh.ts';

const DAY = 86_400_000;
let paymentSeq = 0;
/** A settlement of listing `url` paid by `payer` (a fresh payment id unless one is given). */
function paid(url: string, payer: string | undefined, o: { id?: string; description?: string } = {}): SettledPayment {
  return { ...settlement({ url, description: o.description ?? 'weather forecast' }), payment: { payer, id: o.id ?? `tx-${++paymentSeq}` } };
}
const A = 'https://a.example.com/weather';
const B = 'https://b.example.com/weather';

describe.each(BACKENDS)('on %s', (backend) => {
  const fresh = freshCatalogPerTest(backend);
  const qualityByResource = async (t: ReturnType<typeof fresh>) =>
    Object.fromEntries((await t.catalog.list({}, { limit: 100, offset: 0 })).items.map((i) => [i.resource, i.quality]));

  it('counts settled payments and distinct payers per listing, with the last paid time, in list and search items', async () => {
    const t = fresh();
    for (const payer of ['P1', 'P2', 'P3']) {
      expect(await t.catalog.recordSettlement(paid(A, payer))).toEqual({ status: 'success' });
      t.tick();
    }
    expect(await t.catalog.recordSettlement(paid(B, 'P1'))).toEqual({ status: 'success' });
    const lastB = t.clock().toISOString();
    const quality = await qualityByResource(t);
    expect(quality[A]).toEqual({ l30DaysTotalCalls: 3, l30DaysUniquePayers: 3, lastCalledAt: '2026-01-01T00:00:02.000Z' });
    expect(quality[B]).toEqual({ l30DaysTotalCalls: 1, l30DaysUniquePayers: 1, lastCalledAt: lastB });
    const found = await t.catalog.search('weather', {}, { limit: 10 });
    expect(Object.fromEntries(found.resources.map((r) => [r.resource, r.quality]))).toEqual(quality);
    expect((await t.catalog.list({ resource: A }, { limit: 10, offset: 0 })).items[0]!.quality).toEqual(quality[A]);
  });

  it('repeat payments count as calls, not payers; a payment id is counted once; a payment without payer is a call', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(paid(A, 'P1', { id: 'same' }));
    await t.catalog.recordSettlement(paid(A, 'P1', { id: 'same' })); // the journal ran the hook again
    await t.catalog.recordSettlement(paid(A, 'P1'));
    t.tick(DAY);
    await t.catalog.recordSettlement(paid(A, 'P1'));
    await t.catalog.recordSettlement(paid(A, undefined));
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 4, l30DaysUniquePayers: 1 });
  });

  it('the window is today and the 29 days before it: older payments and payers drop out, a returning payer counts again', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(paid(A, 'P1'));
    await t.catalog.recordSettlement(paid(A, 'P2'));
    t.tick(10 * DAY);
    await t.catalog.recordSettlement(paid(A, 'P2'));
    await t.catalog.recordSettlement(paid(A, 'P3'));
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 4, l30DaysUniquePayers: 3 });
    t.tick(20 * DAY); // day 30: day 0 is out of the window, day 10 still in
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 2, l30DaysUniquePayers: 2 });
    t.tick(10 * DAY); // day 40: nothing left
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 0, l30DaysUniquePayers: 0 });
    await t.catalog.recordSettlement(paid(A, 'P1'));
    await t.catalog.recordSettlement(paid(B, 'P9')); // prunes expired rows
    expect((await qualityByResource(t))[A]).toEqual({
      l30DaysTotalCalls: 1,
      l30DaysUniquePayers: 1,
      lastCalledAt: t.clock().toISOString(),
    });
  });

  it('a payment without an id counts its payer once too', async () => {
    const t = fresh();
    const unnamed = (payer: string) => ({ ...settlement({ url: A, description: 'weather forecast' }), payment: { payer } });
    await t.catalog.recordSettlement(unnamed('P1'));
    await t.catalog.recordSettlement(unnamed('P1'));
    t.tick(DAY);
    await t.catalog.recordSettlement(unnamed('P1'));
    await t.catalog.recordSettlement(unnamed('P2'));
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 4, l30DaysUniquePayers: 2 });
  });

  it('a withdrawn listing listed again starts from zero, and a payment of the old one run again is not counted', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(paid(A, 'P1', { id: 'before' }));
    await t.catalog.recordSettlement(paid(A, 'P2'));
    t.tick();
    const withdrawn = { resource: A, type: 'http', toolName: '', owner: PAY_TO_A, issuedAtMs: t.clock().getTime() };
    expect(await t.catalog.withdraw!(withdrawn)).toEqual({ status: 'delisted' });
    t.tick();
    await t.catalog.recordSettlement(paid(A, 'P1', { id: 'before' })); // the journal ran the old hook again: listed, not counted
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 0, l30DaysUniquePayers: 0 });
    await t.catalog.recordSettlement(paid(A, 'P1'));
    expect((await qualityByResource(t))[A]).toMatchObject({ l30DaysTotalCalls: 1, l30DaysUniquePayers: 1 });
  });

  if (backend === 'Postgres')
    it('several instances on one database count concurrent payments of one listing exactly', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(paid(A, 'P0'));
      const others = [tempCatalog(undefined, { databaseUrl: t.databaseUrl }), tempCatalog(undefined, { databaseUrl: t.databaseUrl })];
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 24 }, (_, i) => [t, ...others][i % 3]!.catalog.recordSettlement(paid(A, `P${i % 8}`))),
        );
        expect(outcomes.every((o) => o?.status === 'success')).toBe(true);
        expect((await qualityByResource(others[0]!))[A]).toMatchObject({ l30DaysTotalCalls: 25, l30DaysUniquePayers: 8 });
      } finally {
        for (const o of others) o.close();
      }
    });
});
