/**
 * Every bazaar rejection code's reason names the actual cause and, where there is one, the fix
 * (docs/CATALOG.md "Rejection reasons"), and POST /discovery/validate's judgment (previewSettlement)
 * gives the same code and reason as a settlement's catalog write (recordSettlement): one code path.
 * A real catalog file; no network.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAZAAR_CODES, type BazaarCode } from '../../src/codes.ts';
import { MAX_ACCEPTS_PER_LISTING } from '../../src/catalog/ingest/settlement.ts';
import { PAY_TO_A, PAY_TO_B, httpBazaar, settlement, tempCatalog, type SettlementOptions } from './fixtures.ts';

let t: ReturnType<typeof tempCatalog>;
beforeAll(() => {
  t = tempCatalog();
});
afterAll(() => t.close());

const b = httpBazaar() as { info: { input: Record<string, unknown> }; schema: Record<string, unknown> };
let n = 0;
const fresh = () => `https://reasons${++n}.example.com/r`;

/** Each code: the settlement that triggers it, and what its reason must name. */
const CASES: Array<[BazaarCode, () => SettlementOptions, RegExp[]]> = [
  [
    'bazaar_extensions_too_large',
    () => ({ url: fresh(), extensions: { bazaar: httpBazaar(), pad: 'x'.repeat(70_000) } }),
    [/65536 bytes/, /extensions/],
  ],
  ['bazaar_extension_not_object', () => ({ url: fresh(), bazaar: { info: {} } }), [/`info` object and a `schema`/]],
  [
    'bazaar_spec_validation_failed',
    () => ({ url: fresh(), bazaar: { ...b, info: { input: { ...b.info.input, method: 'FETCH' } } } }),
    [/info\.input\.method/, /GET/],
  ],
  [
    'bazaar_schema_validation_failed',
    () => ({ url: fresh(), bazaar: { ...b, info: { ...b.info, input: { ...b.info.input, extra: 1 } } } }),
    [/extra|additional/i],
  ],
  [
    'bazaar_schema_too_complex',
    () => ({ url: fresh(), bazaar: { ...b, schema: { enum: Array.from({ length: 2000 }, (_, i) => i) } } }),
    [/2000 nodes/],
  ],
  [
    'bazaar_resource_url_invalid',
    () => ({ url: 'http://10.1.2.3/weather' }),
    [/10\.1\.2\.3 is a private address/, /ALLOW_PRIVATE_TARGETS/],
  ],
  ['bazaar_description_too_long', () => ({ url: fresh(), description: 'd'.repeat(2049) }), [/2048 characters/]],
  ['bazaar_accepts_too_large', () => ({ url: fresh(), serviceName: 'x', extensions: undefined, amount: '1'.repeat(2100) }), [/2048 bytes/]],
];

describe('the reason of each bazaar rejection code', () => {
  it.each(CASES)('%s: the reason names the cause (and the fix); validate and settle agree', async (code, make, names) => {
    const options = make();
    const preview = await t.catalog.previewSettlement!(settlement(options));
    const recorded = await t.catalog.recordSettlement(settlement(options));
    expect(preview).toMatchObject({ outcome: 'rejected', code });
    expect(recorded).toEqual({ status: 'rejected', code, rejectedReason: (preview as { reason: string }).reason });
    for (const name of names) expect((preview as { reason: string }).reason).toMatch(name);
  });

  it('bazaar_listing_owned_by_other_payee: the reason names the owner and how ownership works', async () => {
    const url = fresh();
    expect(await t.catalog.recordSettlement(settlement({ url, payTo: PAY_TO_A }))).toEqual({ status: 'success' });
    const preview = await t.catalog.previewSettlement!(settlement({ url, payTo: PAY_TO_B }));
    const recorded = await t.catalog.recordSettlement(settlement({ url, payTo: PAY_TO_B }));
    expect(preview).toMatchObject({ outcome: 'rejected', code: 'bazaar_listing_owned_by_other_payee' });
    const reason = (preview as { reason: string }).reason;
    expect(recorded).toEqual({ status: 'rejected', code: 'bazaar_listing_owned_by_other_payee', rejectedReason: reason });
    expect(reason).toContain(`owned by payTo ${PAY_TO_A}, not ${PAY_TO_B}`);
    expect(reason).toMatch(/first settlement that listed it/);
    // How the owner withdraws it, and what follows.
    expect(reason).toContain(`Only the holder of ${PAY_TO_A}'s key can withdraw the listing (POST /discovery/delist`);
    expect(reason).toMatch(/next settlement after that lists the resource for its own payTo/);
    expect(reason).toMatch(/pay \S+ for this resource/);
  });

  it('covers every BazaarCode', () => {
    // The origin's codes are judged from what the resource's server answered: test/net/ownership.test.ts.
    // A template escape (nothing sent): test/security/outbound.test.ts; the claims backlog: test/net/ownership.test.ts.
    const fromOrigin = [
      'bazaar_origin_names_other_payee',
      'bazaar_origin_not_payable',
      'bazaar_origin_unreachable',
      'bazaar_path_params_invalid',
      'bazaar_claims_backlog_full',
    ];
    expect(new Set([...CASES.map(([code]) => code), 'bazaar_listing_owned_by_other_payee', ...fromOrigin])).toEqual(
      new Set(Object.keys(BAZAAR_CODES)),
    );
    expect(MAX_ACCEPTS_PER_LISTING).toBe(32);
  });

  it('a listing that would be written: the preview is the stored item, and nothing is written', async () => {
    const url = fresh();
    const preview = await t.catalog.previewSettlement!(settlement({ url, description: 'A forecast', serviceName: 'Weather' }));
    expect(preview).toMatchObject({
      outcome: 'listed',
      listing: { resource: url, type: 'http', description: 'A forecast', serviceName: 'Weather', accepts: [{ payTo: PAY_TO_A }] },
    });
    expect((await t.catalog.list({ resource: url }, { limit: 5, offset: 0 })).items).toEqual([]);
    // A real settlement has a payer (and a payment id), as the preview assumes.
    await t.catalog.recordSettlement({
      ...settlement({ url, description: 'A forecast', serviceName: 'Weather' }),
      payment: { payer: PAY_TO_B, id: 'f'.repeat(64) },
    });
    const [stored] = (await t.catalog.list({ resource: url }, { limit: 5, offset: 0 })).items;
    // The same item but for the time of the write.
    const timeless = (item: Record<string, any>) => ({ ...item, lastUpdated: '', quality: { ...item.quality, lastCalledAt: '' } });
    expect(timeless(stored!)).toEqual(timeless((preview as { listing: Record<string, any> }).listing));
  });
});
