/**
 * Canonical identity (docs/CATALOG.md): spellings RFC 3986 calls equivalent, and a trailing slash,
 * name one listing, so a second seller cannot squat a resource through them; scheme and path case
 * stay distinct. Size caps on description and accepted terms, with their codes.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ACCEPTS_PER_LISTING, MAX_DESCRIPTION_LENGTH } from '../../src/catalog/ingest/settlement.ts';
import { PAY_TO_A, PAY_TO_B, settlement } from './fixtures.ts';
import { freshCatalogPerTest } from './fresh.ts';

const fresh = freshCatalogPerTest();

describe('canonical identity', () => {
  it.each([
    ['percent-encoded unreserved letter', 'https://squat.example.com/w%65ather'],
    ['lower-case escape of an unreserved letter', 'https://squat.example.com/%77eather'],
    ['trailing-dot host', 'https://squat.example.com./weather'],
    ['trailing slash', 'https://squat.example.com/weather/'],
    ['upper-case host and default port', 'https://SQUAT.Example.COM:443/weather'],
    ['all at once', 'https://Squat.Example.Com.:443/w%65%61ther/'],
  ])('%s reaches the owner’s listing, so another payTo is refused', async (_, variant) => {
    const t = fresh();
    expect(await t.catalog.recordSettlement(settlement({ url: 'https://squat.example.com/weather', payTo: PAY_TO_A }))).toEqual({
      status: 'success',
    });
    expect(await t.catalog.recordSettlement(settlement({ url: variant, payTo: PAY_TO_B }))).toMatchObject({
      status: 'rejected',
      code: 'bazaar_listing_owned_by_other_payee',
    });
    expect(await t.catalog.recordSettlement(settlement({ url: variant, payTo: PAY_TO_A }))).toEqual({ status: 'success' });
    const page = await t.catalog.list({}, { limit: 10, offset: 0 });
    expect(page.items.map((l) => (l as { resource: string }).resource)).toEqual(['https://squat.example.com/weather']);
  });

  it('an empty path is "/", and escapes of reserved characters are kept (upper-case hex)', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(settlement({ url: 'http://a.example.com:80' }));
    await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/x%2fy' }));
    const resources = (await t.catalog.list({}, { limit: 10, offset: 0 })).items.map((l) => (l as { resource: string }).resource).sort();
    expect(resources).toEqual(['http://a.example.com/', 'https://a.example.com/x%2Fy']);
  });

  it('scheme and path case stay distinct listings', async () => {
    const t = fresh();
    for (const url of ['https://a.example.com/Weather', 'https://a.example.com/weather', 'http://a.example.com/weather']) {
      expect(await t.catalog.recordSettlement(settlement({ url, payTo: url.startsWith('http:') ? PAY_TO_B : PAY_TO_A }))).toEqual({
        status: 'success',
      });
    }
    expect((await t.catalog.list({}, { limit: 10, offset: 0 })).pagination.total).toBe(3);
  });
});

describe('size caps', () => {
  it('a description over the cap is refused with bazaar_description_too_long, nothing written', async () => {
    const t = fresh();
    const outcome = await t.catalog.recordSettlement(settlement({ description: 'x'.repeat(MAX_DESCRIPTION_LENGTH + 1) }));
    expect(outcome).toMatchObject({ status: 'rejected', code: 'bazaar_description_too_long' });
    expect((await t.catalog.list({}, { limit: 1, offset: 0 })).pagination.total).toBe(0);
    expect(await t.catalog.recordSettlement(settlement({ description: 'x'.repeat(MAX_DESCRIPTION_LENGTH) }))).toEqual({
      status: 'success',
    });
  });

  it('oversized terms, and more distinct terms than the cap, are refused with bazaar_accepts_too_large', async () => {
    const t = fresh();
    const big = settlement();
    big.paymentRequirements.amount = '1'.repeat(4096);
    expect(await t.catalog.recordSettlement(big)).toMatchObject({ status: 'rejected', code: 'bazaar_accepts_too_large' });
    for (let i = 0; i < MAX_ACCEPTS_PER_LISTING; i++) {
      expect(await t.catalog.recordSettlement(settlement({ amount: String(1000 + i) }))).toEqual({ status: 'success' });
    }
    expect(await t.catalog.recordSettlement(settlement({ amount: '999999' }))).toMatchObject({
      status: 'rejected',
      code: 'bazaar_accepts_too_large',
    });
    // Known terms still refresh the listing.
    expect(await t.catalog.recordSettlement(settlement({ amount: '1000' }))).toEqual({ status: 'success' });
    const [listing] = (await t.catalog.list({}, { limit: 1, offset: 0 })).items as Array<{ accepts: unknown[] }>;
    expect(listing!.accepts).toHaveLength(MAX_ACCEPTS_PER_LISTING);
  });
});
