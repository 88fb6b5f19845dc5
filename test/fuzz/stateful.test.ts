/**
 * Stateful fuzzing: generated real payments (signed with the buyer builder in src/client on the
 * devnet) carrying generated bazaar extensions are settled over HTTP, some of them twice at the
 * same time; then list and search must agree with a model of what was cataloged:
 * every listing visible exactly once, totals right, offset walks and cursor walks visit each
 * match exactly once, filters agree with the listings' fields, ownership holds.
 *
 * Budget: FUZZ_STATEFUL_RUNS sequences (default 2 in `npm test`), each of up to 6 settlements.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { checkExchange, exchange, FuzzStats, fuzzRequest, jsonBody, send } from '../helpers/fuzz-http.ts';
import { startFuzzSvc, type FuzzSvc } from '../helpers/fuzz-svc.ts';
import { BACKENDS } from '../helpers/postgres.ts';
import { FORBIDDEN_PROTOTYPE_KEY_MESSAGE } from '../../src/http/middleware.ts';
import { httpBazaar, mcpBazaar } from '../catalog/fixtures.ts';
import { bazaarArb } from '../helpers/fuzz-requests.ts';
import { anyJson, deeplyNested, mutatedValue, nastyString } from '../helpers/fuzz-schema.ts';

const RUNS = Number(process.env.FUZZ_STATEFUL_RUNS ?? 2);
/** Real settlements carrying generated (mostly hostile) extensions and resources. */
const HOOK_RUNS = Number(process.env.FUZZ_HOOK_RUNS ?? 6);
const MAX_SETTLEMENTS = Number(process.env.FUZZ_STATEFUL_SETTLEMENTS ?? 6);
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED);

let svc: FuzzSvc;
let stats = new FuzzStats();
/** Catalog outcomes of successful settlements: status or code → count. */
let outcomes = new Map<string, number>();

const WORDS = ['weather', 'forecast', 'stock', 'price', 'translate', 'image', 'summary', 'news', 'route', 'map'];

interface ListingSpec {
  host: number;
  path: string;
  type: 'http' | 'mcp';
  toolName: string;
  seller: 0 | 1;
  amount: string;
  serviceName?: string;
  tags?: string[];
  words: string[];
  /** Settle the same payment this many times at once (exactly one may succeed). */
  copies: number;
  /** A bazaar extension the catalog must refuse (nothing is listed). */
  broken: boolean;
}

const printable = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 -_.'), minLength: 1, maxLength: 32 });
const listingSpec: fc.Arbitrary<Omit<ListingSpec, 'broken'>> = fc.record(
  {
    host: fc.nat({ max: 3 }),
    path: fc.constantFrom('a', 'b', 'api/v1', 'x-y'),
    type: fc.constantFrom<'http' | 'mcp'>('http', 'mcp'),
    toolName: fc.constantFrom('alpha', 'beta'),
    seller: fc.constantFrom<0 | 1>(0, 1),
    amount: fc.integer({ min: 1, max: 1_000_000 }).map(String),
    serviceName: printable,
    tags: fc.array(fc.constantFrom(...WORDS), { maxLength: 5 }),
    words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
    copies: fc.constantFrom(1, 1, 1, 2, 3),
  },
  { requiredKeys: ['host', 'path', 'type', 'toolName', 'seller', 'amount', 'words', 'copies'] },
);

/** A listing's identity: (resource, type, toolName) (openapi.yaml, DiscoveryResource). */
const identityOf = (item: any) =>
  `${item.resource}|${item.type}|${item.type === 'mcp' ? (item.extensions?.bazaar?.info?.input?.toolName ?? '') : ''}`;

const post = (body: unknown) =>
  fuzzRequest({
    method: 'POST',
    target: '/settle',
    headers: { 'content-type': 'application/json' },
    body: jsonBody(body),
    kind: 'stateful settlement',
  });
const get = (path: string, params: Record<string, string | number | undefined>) => {
  const query = new URLSearchParams(
    Object.entries(params).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : [[k, String(v)]])),
  ).toString();
  return fuzzRequest({ method: 'GET', target: `${path}?${query}`, headers: {}, kind: 'stateful read' });
};

async function settleWithHeader(body: unknown): Promise<{ body: any; bazaar: any }> {
  const request = post(body);
  const res = await send(svc.url, request);
  const parsed = checkExchange(request, res) as any;
  stats.record(request, res, parsed);
  const header = res.headers.get('extension-responses');
  const bazaar = header === null ? null : JSON.parse(Buffer.from(header, 'base64').toString('utf8')).bazaar;
  if (parsed?.success === true) {
    const key = bazaar === null ? '(no header)' : (bazaar.code ?? bazaar.status);
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  return { body: parsed, bazaar };
}

/** Every item of the list for these filters, walked by offset with page size `limit`. */
async function walkList(filters: Record<string, string>, limit: number): Promise<{ items: any[]; total: number }> {
  const items: any[] = [];
  let total = -1;
  for (let offset = 0; ; offset += limit) {
    const page = (await exchange(svc.url, get('/discovery/resources', { ...filters, limit, offset }), stats)) as any;
    if (total === -1) total = page.pagination.total;
    expect(page.pagination).toEqual({ limit, offset, total });
    items.push(...page.items);
    if (page.items.length < limit) break;
  }
  return { items, total };
}

/** Every result of a search, walked by cursor with page size `limit`. */
async function walkSearch(query: string, filters: Record<string, string>, limit: number): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const page = (await exchange(svc.url, get('/discovery/search', { query, ...filters, limit, cursor }), stats)) as any;
    expect(page.pagination.limit).toBe(limit);
    expect(page.resources.length).toBeLessThanOrEqual(limit);
    if (page.pagination.cursor !== null) expect(page.partialResults).toBe(true);
    out.push(...page.resources);
    if (page.pagination.cursor === null) return out;
    cursor = page.pagination.cursor;
  }
  throw new Error('cursor walk did not end within 200 pages');
}

const counts = (keys: string[]) => keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());

/** Does the JSON text carry a key the body parser refuses ("__proto__")? */
const hasPrototypeKey = (value: unknown) => (JSON.stringify(value) ?? '').includes('"__proto__":');

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(async () => {
    stats = new FuzzStats();
    outcomes = new Map();
    svc = await startFuzzSvc({ ledgerMs: 150, submitters: 3, backend });
  }, 60_000);
  afterAll(async () => {
    const hook = [...outcomes.entries()].map(([k, n]) => `${k}×${n}`).join(', ');
    console.log(
      `stateful fuzz on ${backend} (seed ${SEED}, FUZZ_STATEFUL_RUNS=${RUNS}, FUZZ_HOOK_RUNS=${HOOK_RUNS}):\n${stats.table()}\n\nEXTENSION-RESPONSES on successful settlements: ${hook}`,
    );
    await svc?.stop();
  });

  describe('settled payments with bazaar extensions are discoverable exactly as settled', () => {
    let run = 0;
    it('list and search agree with the model after generated settlement sequences', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(listingSpec, fc.boolean()), { minLength: 1, maxLength: MAX_SETTLEMENTS }),
          fc.integer({ min: 1, max: 4 }),
          async (pairs, pageSize) => {
            const specs = pairs.map(([s, broken]) => ({ ...s, broken: broken && s.copies === 1 && s.host === 3 }));
            // A word no other run uses: searches for it find exactly this run's listings.
            const tag = `zq${++run}run`;
            const [p0, p1] = await Promise.all([svc.parties(1_000_000_000n), svc.parties(1_000_000_000n)]);
            const sellers: Keypair[] = [p0.seller, p1.seller];
            const buyers: Keypair[] = [p0.buyer, p1.buyer];
            /** identity → owner (seller index). */
            const model = new Map<string, { owner: 0 | 1; type: string }>();

            for (const [i, spec] of specs.entries()) {
              const url = `https://h${spec.host}-${tag}.example.com/${spec.path}`;
              const identity = `${url}|${spec.type}|${spec.type === 'mcp' ? spec.toolName : ''}`;
              const bazaar = spec.broken
                ? 'not an object'
                : spec.type === 'mcp'
                  ? mcpBazaar(spec.toolName, `${tag} ${spec.words.join(' ')}`)
                  : httpBazaar({ paramSchema: { q: { type: 'string', description: spec.words.join(' ') } } });
              const resource = {
                url,
                description: `${tag} ${spec.words.join(' ')}`,
                ...(spec.serviceName ? { serviceName: spec.serviceName } : {}),
                ...(spec.tags ? { tags: spec.tags } : {}),
              };
              const requirements = svc.requirements(sellers[spec.seller]!.publicKey(), { amount: spec.amount });
              const payload = await svc.pay(requirements, buyers[i % 2]!, { resource, extensions: { bazaar } });
              const envelope = { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements };
              const results = await Promise.all(Array.from({ length: spec.copies }, () => settleWithHeader(envelope)));
              const succeeded = results.filter((r) => r.body.success === true);
              expect(
                succeeded,
                `exactly one of ${spec.copies} concurrent settlements succeeds: ${JSON.stringify(results.map((r) => r.body))}`,
              ).toHaveLength(1);
              for (const r of results) if (r.body.success !== true) expect(r.bazaar).toBeNull();
              const outcome = succeeded[0]!.bazaar;
              const owner = model.get(identity)?.owner;
              if (spec.broken) {
                expect(outcome).toMatchObject({ status: 'rejected', code: 'bazaar_extension_not_object' });
              } else if (owner !== undefined && owner !== spec.seller) {
                expect(outcome).toMatchObject({ status: 'rejected', code: 'bazaar_listing_owned_by_other_payee' });
              } else {
                expect(outcome).toEqual({ status: 'success' });
                model.set(identity, { owner: spec.seller, type: spec.type });
              }
            }

            for (const s of [0, 1] as const) {
              const payTo = sellers[s]!.publicKey();
              const expected = [...model.entries()]
                .filter(([, v]) => v.owner === s)
                .map(([k]) => k)
                .sort();
              // Offset walk: each listing once, total right, every item owned by the filter's payTo.
              const { items, total } = await walkList({ payTo }, pageSize);
              expect(total).toBe(expected.length);
              expect(items.map(identityOf).sort()).toEqual(expected);
              for (const item of items) expect(item.accepts.some((a: any) => a.payTo === payTo)).toBe(true);
              // Type filters partition the seller's listings and agree with each item's type.
              let byType = 0;
              for (const type of ['http', 'mcp']) {
                const filtered = await walkList({ payTo, type }, 100);
                for (const item of filtered.items) expect(item.type).toBe(type);
                expect(filtered.items.map(identityOf).sort()).toEqual(expected.filter((k) => model.get(k)!.type === type));
                byType += filtered.total;
              }
              expect(byType).toBe(total);
              const onOtherNetwork = await walkList({ payTo, network: 'stellar:pubnet' }, 100);
              expect(onOtherNetwork.total).toBe(0);
              const sameNetwork = await walkList({ payTo, network: 'stellar:testnet', scheme: 'exact', extensions: 'bazaar' }, 100);
              expect(sameNetwork.total).toBe(total);
              // Cursor walk over the run's tag: each match once, the same set as the list.
              const found = await walkSearch(tag, { payTo }, pageSize);
              expect(
                [...counts(found.map(identityOf)).values()].every((n) => n === 1),
                'a cursor walk repeats a listing',
              ).toBe(true);
              expect(found.map(identityOf).sort()).toEqual(expected);
            }
            const everything = await walkSearch(`${tag} nothingmatchesthis`, {}, pageSize + 1);
            expect(everything.map(identityOf).sort()).toEqual([...model.keys()].sort());
            await svc.expectHealthy();
          },
        ),
        // No shrinking: a sequence is a handful of real settlements; the seed and the whole
        // counterexample are printed and replay with FUZZ_SEED.
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }, 600_000);
  });

  describe('the catalog hook on real settlements with generated extensions and resources', () => {
    const extensionsArb = fc
      .oneof(
        fc.record({ bazaar: bazaarArb() }),
        fc.record({
          bazaar: fc.constantFrom(httpBazaar(), mcpBazaar('t')).chain((b) => mutatedValue({}).map((junk) => ({ ...b, info: junk }))),
        }),
        fc.record({ bazaar: fc.constant(httpBazaar()), other: anyJson }),
        fc.constant({ bazaar: { info: deeplyNested(2_000, 'object'), schema: deeplyNested(2_000, 'array') } }),
        fc.constant({ bazaar: { ...httpBazaar(), pad: 'x'.repeat(70 * 1024) } }),
        anyJson,
      )
      .filter((e) => (JSON.stringify(e) ?? '').length < 150_000);
    // Kept well under the 256 KiB body limit: these settlements must go through.
    const text = nastyString.filter((s) => s.length <= 20_000);
    const resourceArb = fc.oneof(
      fc.record(
        {
          url: fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), text),
          description: text,
          serviceName: anyJson,
          tags: anyJson,
          iconUrl: anyJson,
        },
        { requiredKeys: ['url'] },
      ),
      anyJson,
    );

    it('settle always succeeds with a valid body; the header is absent or a coded outcome; a success is listed', async () => {
      const { buyer } = await svc.parties(1_000_000_000n);
      await fc.assert(
        fc.asyncProperty(extensionsArb, resourceArb, async (extensions, resource) => {
          const { seller } = await svc.parties(0n);
          const requirements = svc.requirements(seller.publicKey());
          const payload = await svc.pay(requirements, buyer);
          // Neither resource nor extensions is covered by the buyer's signature: swap in the junk.
          const envelope = { x402Version: 2, paymentPayload: { ...payload, resource, extensions }, paymentRequirements: requirements };
          const { body, bazaar } = await settleWithHeader(envelope);
          if (hasPrototypeKey(envelope)) {
            // Refused by the body parser before anything runs (see test/fuzz/regressions.test.ts).
            expect(body).toMatchObject({
              success: false,
              errorReason: 'svc_malformed_request_body',
              errorMessage: FORBIDDEN_PROTOTYPE_KEY_MESSAGE,
            });
            return;
          }
          expect(body, JSON.stringify(body)).toMatchObject({ success: true });
          const listed = (await walkList({ payTo: seller.publicKey() }, 100)).total;
          if (bazaar?.status === 'success') expect(listed).toBe(1);
          else expect(listed).toBe(0);
          if (bazaar?.status === 'rejected') expect(bazaar.rejectedReason).toMatch(/\S/);
        }),
        { numRuns: HOOK_RUNS, seed: SEED + 1, endOnFailure: true },
      );
      await svc.expectHealthy();
    }, 600_000);
  });
});
