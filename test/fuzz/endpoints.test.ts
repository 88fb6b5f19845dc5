/**
 * Contract fuzzing of every operation in openapi.yaml over real HTTP: generated valid and broken
 * requests against svc wired as in production (real exact scheme on a loopback devnet, real
 * catalog on a temp SQLite file). Every response goes through the oracle in fuzz-http.ts (no 5xx,
 * declared status, schema-valid body and headers, JSON, coded rejections, X-Request-Id rule), and
 * /health must answer after every batch.
 *
 * Budget: FUZZ_RUNS requests per operation (default 60 in `npm test`; `npm run fuzz` runs
 * thousands; a quarter of them for the 4.3 MB script, RUNS_OF). FUZZ_SEED fixes the seed; a failure prints the seed, the path and the shrunk
 * request (method, target, headers, body) so `FUZZ_SEED=… npx vitest run test/fuzz` replays it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkExchange, exchange, FuzzStats, fuzzRequest, jsonBody, send } from '../helpers/fuzz-http.ts';
import { ACCEPTED_STATUSES, exampleRequests } from '../helpers/openapi-examples.ts';
import { OPERATION_IDS, operationRequest, preflightRequest, unknownRouteRequest, type FuzzWorld } from '../helpers/fuzz-requests.ts';
import { startFuzzSvc, type FuzzSvc } from '../helpers/fuzz-svc.ts';
import { BACKENDS } from '../helpers/postgres.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED);
/**
 * Fewer runs for an operation whose every answer is a file of megabytes (Scalar's script, 4.3 MB):
 * sending, reading and decoding one cost about 200 ms of CPU, a hundred times what most answers
 * cost, and the request side it meets (junk queries, stray bodies, odd header fields) is the one
 * every other parameterless GET gets its full runs of. `npm run fuzz` scales it with FUZZ_RUNS.
 */
const RUNS_OF: Record<string, number> = { getApiReferenceScript: Math.max(10, Math.ceil(RUNS / 4)) };
/** /health is checked every this many requests, and after each operation. */
const HEALTH_EVERY = 100;
/**
 * An outside fuzzer's budget per operation (Schemathesis' default is 100 examples) must be spent
 * in well under a minute: at up to this many runs, an operation that takes longer fails.
 */
const MINUTE_BUDGET_RUNS = 100;

describe.each(BACKENDS)('on %s', (backend) => {
  let svc: FuzzSvc;
  const stats = new FuzzStats();
  const world: FuzzWorld = {
    payments: [],
    addresses: [],
    assets: [],
    cursors: [],
    words: ['weather', 'forecast', 'lisbon', 'summarize', 'tool'],
    resources: ['https://weather.example.com/forecast', 'https://tools.example.com/mcp'],
  };

  beforeAll(async () => {
    svc = await startFuzzSvc({ ledgerMs: 200, backend });
    const [a, b] = await Promise.all([svc.parties(), svc.parties()]);
    world.addresses.push(a.seller.publicKey(), b.seller.publicKey(), a.buyer.publicKey(), ...svc.submitters, svc.devnet.usdc.contractId);
    world.assets.push(svc.devnet.usdc.contractId, svc.devnet.customToken.contractId, svc.devnet.usdc.issuer);
    // Two listings to discover, then unsettled real payments for the generators.
    const seeded = [
      { url: 'https://weather.example.com/forecast', serviceName: 'WeatherNow', words: 'weather forecast by city' },
      { url: 'https://tools.example.com/mcp', serviceName: 'Summarizer', words: 'summarize a text' },
    ];
    for (const [i, s] of seeded.entries()) {
      const req = svc.requirements(a.seller.publicKey());
      const extensions = { bazaar: i === 0 ? httpBazaar() : mcpBazaar('summarize') };
      const payload = await svc.pay(req, a.buyer, { resource: { url: s.url, description: s.words }, extensions });
      const body = (await exchange(
        svc.url,
        fuzzRequest({
          method: 'POST',
          target: '/settle',
          headers: { 'content-type': 'application/json' },
          body: jsonBody({ x402Version: 2, paymentPayload: payload, paymentRequirements: req }),
          kind: 'seed settlement',
        }),
      )) as any;
      expect(body).toMatchObject({ success: true });
    }
    // Real payments for the generators; each settles once (then it is a replay).
    for (let i = 0; i < 12; i++) {
      const req = svc.requirements((i % 2 ? a : b).seller.publicKey());
      const payload = await svc.pay(req, a.buyer, {
        resource: { url: `https://paid${i}.example.com/r` },
        extensions: { bazaar: httpBazaar() },
      });
      world.payments.push({ paymentPayload: payload, paymentRequirements: req });
    }
  }, 120_000);

  afterAll(async () => {
    console.log(`contract fuzz on ${backend} (seed ${SEED}, FUZZ_RUNS=${RUNS}):\n${stats.table()}`);
    await svc?.stop();
  });

  function httpBazaar() {
    return {
      info: { input: { type: 'http', method: 'GET', queryParams: { city: 'Lisbon' } } },
      schema: {
        type: 'object',
        properties: {
          input: {
            type: 'object',
            properties: { queryParams: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } } },
          },
        },
      },
    };
  }
  function mcpBazaar(toolName: string) {
    return {
      info: { input: { type: 'mcp', toolName, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } } },
      schema: { type: 'object' },
    };
  }

  async function fuzz(name: string, arb: fc.Arbitrary<ReturnType<typeof fuzzRequest>>, seedOffset: number) {
    const runs = RUNS_OF[name] ?? RUNS;
    const started = performance.now();
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(arb, async (request) => {
        const body = (await exchange(svc.url, request, stats)) as any;
        const cursor = body?.pagination?.cursor;
        if (typeof cursor === 'string' && world.cursors.length < 200) world.cursors.push(cursor);
        if (++sent % HEALTH_EVERY === 0) await svc.expectHealthy();
      }),
      { numRuns: runs, seed: SEED + seedOffset },
    );
    await svc.expectHealthy();
    expect(sent, name).toBeGreaterThanOrEqual(runs);
    const seconds = (performance.now() - started) / 1000;
    if (runs <= MINUTE_BUDGET_RUNS) expect(seconds, `${name}: ${runs} requests took ${seconds.toFixed(1)} s`).toBeLessThan(60);
  }

  // An outside fuzzer's first phase sends these; each must be answered as documented.
  it('every example in openapi.yaml is answered as documented, with a status a schema-valid request may get', async () => {
    const examples = exampleRequests();
    expect(new Set(examples.map(({ operation }) => operation)).size).toBeGreaterThanOrEqual(9);
    for (const { operation, request } of examples) {
      const res = await send(svc.url, request);
      checkExchange(request, res);
      expect(ACCEPTED_STATUSES(res.status), `${operation} (${request.kind}) answered ${res.status}: ${res.text.slice(0, 300)}`).toBe(true);
    }
  });

  describe('every operation of openapi.yaml answers generated requests within its contract', () => {
    it.each(OPERATION_IDS.map((id, i) => [id, i] as const))(
      '%s',
      async (operationId, i) => {
        await fuzz(operationId, operationRequest(operationId, world), i);
      },
      600_000,
    );

    it('CORS preflights (not operations) answer 204 on every path of an x-svc-cors operation', async () => {
      await fuzz('preflights', preflightRequest(), OPERATION_IDS.length + 3);
    }, 600_000);

    it('random methods and paths are 404 (405 + Allow on a known path) svc_unknown_route', async () => {
      await fuzz('unknown routes', unknownRouteRequest(), OPERATION_IDS.length);
    }, 600_000);

    it('concurrent batches of mixed requests stay within the contract', async () => {
      const anyRequest = fc.oneof(...OPERATION_IDS.map((id) => operationRequest(id, world)), preflightRequest(), unknownRouteRequest());
      const batches = Math.max(2, Math.ceil(RUNS / 10));
      await fc.assert(
        fc.asyncProperty(fc.array(anyRequest, { minLength: 2, maxLength: 16 }), async (requests) => {
          await Promise.all(requests.map((r) => exchange(svc.url, r, stats)));
          await svc.expectHealthy();
        }),
        { numRuns: batches, seed: SEED + OPERATION_IDS.length + 1 },
      );
    }, 600_000);

    it('a burst of 200 concurrent mixed requests stays within the contract and /health still answers', async () => {
      const anyRequest = fc.oneof(...OPERATION_IDS.map((id) => operationRequest(id, world)), preflightRequest(), unknownRouteRequest());
      const burst = fc.sample(anyRequest, { numRuns: 200, seed: SEED + OPERATION_IDS.length + 2 });
      await Promise.all(burst.map((r) => exchange(svc.url, r, stats)));
      await svc.expectHealthy();
    }, 120_000);
  });
});
