/**
 * The `asset` and `maxAmount` discovery filters (openapi.yaml AssetFilter, MaxAmountFilter), on
 * SQLite and PostgreSQL, through list and search: include and exclude exactly at the bound, one
 * accepted entry must match asset, amount and scheme/network together, maxAmount alone is
 * refused, and both are bound into the search cursor.
 */
import { describe, expect, it } from 'vitest';
import { CatalogQueryError } from '../../src/catalog/types.ts';
import { ASSET, settlement } from './fixtures.ts';
import { BACKENDS, freshCatalogPerTest } from './fresh.ts';

const OTHER_ASSET = 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC';
/** A settlement of `url` priced `amount` of `asset`. */
function priced(url: string, amount: string, asset = ASSET) {
  const s = settlement({ url, amount, description: 'price test listing' });
  s.paymentRequirements.asset = asset;
  return s;
}

describe.each(BACKENDS)('on %s', (backend) => {
  const fresh = freshCatalogPerTest(backend);

  it('asset and maxAmount include and exclude exactly, in list and search, with totals', async () => {
    const t = fresh();
    const listings: Array<[string, string, string?]> = [
      ['https://cheap.example.com/r', '99'],
      ['https://exact.example.com/r', '100'],
      ['https://dear.example.com/r', '101'],
      ['https://huge.example.com/r', '100000000000000000000'],
      ['https://other.example.com/r', '1', OTHER_ASSET],
    ];
    for (const [url, amount, asset] of listings) {
      expect(await t.catalog.recordSettlement(priced(url, amount, asset))).toEqual({ status: 'success' });
      t.tick();
    }
    const listed = async (filters: Record<string, string>) => {
      const page = await t.catalog.list(filters, { limit: 100, offset: 0 });
      const found = await t.catalog.search('price', filters, { limit: 100 });
      const hosts = page.items.map((i) => new URL(i.resource).host.split('.')[0]).sort();
      expect(found.resources.map((i) => new URL(i.resource).host.split('.')[0]).sort()).toEqual(hosts);
      expect(page.pagination.total).toBe(hosts.length);
      return hosts;
    };
    expect(await listed({ asset: ASSET })).toEqual(['cheap', 'dear', 'exact', 'huge']);
    expect(await listed({ asset: OTHER_ASSET })).toEqual(['other']);
    expect(await listed({ asset: ASSET, maxAmount: '100' })).toEqual(['cheap', 'exact']);
    expect(await listed({ asset: ASSET, maxAmount: '0099' })).toEqual(['cheap']);
    expect(await listed({ asset: ASSET, maxAmount: '98' })).toEqual([]);
    expect(await listed({ asset: ASSET, maxAmount: '99999999999999999999' })).toEqual(['cheap', 'dear', 'exact']);
    expect(await listed({ asset: ASSET, maxAmount: '100000000000000000000' })).toEqual(['cheap', 'dear', 'exact', 'huge']);
    expect(await listed({ asset: OTHER_ASSET, maxAmount: '0' })).toEqual([]);
    expect(await listed({ asset: ASSET, network: 'stellar:testnet', maxAmount: '100' })).toEqual(['cheap', 'exact']);
    expect(await listed({ asset: ASSET, network: 'stellar:pubnet' })).toEqual([]);
    expect(await listed({ asset: 'CNOPE' })).toEqual([]);
  });

  it('one accepted entry must match asset and amount together', async () => {
    const t = fresh();
    // One listing accepting 1000 of ASSET and 5 of OTHER_ASSET.
    await t.catalog.recordSettlement(priced('https://two.example.com/r', '1000'));
    await t.catalog.recordSettlement(priced('https://two.example.com/r', '5', OTHER_ASSET));
    const total = async (filters: Record<string, string>) => (await t.catalog.list(filters, { limit: 10, offset: 0 })).pagination.total;
    expect(await total({ asset: ASSET, maxAmount: '10' })).toBe(0);
    expect(await total({ asset: OTHER_ASSET, maxAmount: '10' })).toBe(1);
    expect(await total({ asset: ASSET, maxAmount: '1000' })).toBe(1);
  });

  it('maxAmount without asset, or not a whole number, is refused with svc_invalid_query_parameter; both bind the cursor', async () => {
    const t = fresh();
    for (let i = 0; i < 3; i++) await t.catalog.recordSettlement(priced(`https://p${i}.example.com/r`, '10'));
    for (const filters of [{ maxAmount: '10' }, { asset: ASSET, maxAmount: '1e3' }]) {
      const refusals = [t.catalog.list(filters, { limit: 10, offset: 0 }), t.catalog.search('price', filters, { limit: 10 })];
      for (const refusal of refusals) {
        const err = await refusal.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(CatalogQueryError);
        expect(err).toMatchObject({ code: 'svc_invalid_query_parameter', status: 400 });
      }
    }
    const first = await t.catalog.search('price', { asset: ASSET, maxAmount: '10' }, { limit: 1 });
    const cursor = first.pagination.cursor!;
    expect(cursor).toBeTruthy();
    for (const filters of [{ asset: ASSET }, { asset: ASSET, maxAmount: '11' }, { asset: OTHER_ASSET, maxAmount: '10' }])
      await expect(t.catalog.search('price', filters, { limit: 1, cursor })).rejects.toMatchObject({ code: 'svc_invalid_search_cursor' });
    const second = await t.catalog.search('price', { asset: ASSET, maxAmount: '10' }, { limit: 5, cursor });
    expect(second.resources).toHaveLength(2);
  });
});
