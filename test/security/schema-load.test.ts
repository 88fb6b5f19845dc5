/**
 * Hostile seller schemas do not slow payments (docs/SECURITY.md "Seller schemas"): while settles
 * carrying slow schemas are processed, /verify and schema-less /settle answer within 2× of their
 * latency without them, and each hostile settle gets its soft-drop code within the 250 ms hook
 * budget. The scheme settles at once (the named PaymentScheme boundary), so what is measured is
 * svc's own thread; the catalog and its schema worker are real.
 */
import { cpus, loadavg } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog, type Catalog } from '../../src/catalog/index.ts';
import { startTestServer } from '../helpers/server.ts';
import { tempDir } from '../catalog/fixtures.ts';
import { slowSchemas } from './hostile-schemas.ts';
import { envelopeBody, instantScheme } from './payment-fixtures.ts';

let url: string;
let close: () => Promise<void>;
let catalog: Catalog;
const dir = tempDir();
beforeAll(async () => {
  catalog = openCatalog({ dbPath: `${dir.dir}/catalog.sqlite`, logger: { warn() {}, error() {} } });
  const server = await startTestServer({ scheme: instantScheme(), catalog });
  url = server.url;
  close = () => server.close();
});
afterAll(async () => {
  await close?.();
  await catalog?.close();
  dir.cleanup();
});

let n = 0;
async function post(path: '/verify' | '/settle', bazaar?: unknown): Promise<{ ms: number; code?: string }> {
  const extensions = bazaar ? { bazaar } : undefined;
  const body = envelopeBody({ resource: { url: `https://load${++n}.example.com/r` }, ...(extensions ? { extensions } : {}) });
  const started = performance.now();
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  const ms = performance.now() - started;
  expect(res.status).toBe(200);
  const header = res.headers.get('extension-responses');
  return { ms, code: header ? JSON.parse(Buffer.from(header, 'base64').toString()).bazaar.code : undefined };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('hostile schemas under payment load', () => {
  it('/verify and /settle stay within 2× of normal; each hostile schema is soft-dropped with a code within 250 ms', async () => {
    const hostile = [
      ...slowSchemas().map((c) => ({ info: c.info, schema: c.schema })),
      { info: { input: { type: 'http', method: 'GET' } }, schema: { $ref: '#' } },
    ];
    await post('/settle', { info: { input: { type: 'http', method: 'GET' } }, schema: { type: 'object' } }); // warm: the worker is up
    const normal = { verify: [] as number[], settle: [] as number[] };
    for (let i = 0; i < 40; i++) {
      normal.verify.push((await post('/verify')).ms);
      normal.settle.push((await post('/settle')).ms);
    }

    // What carrying each hostile body costs a request before any hook runs (parse, validation,
    // transfer): the same body through /verify, which never runs the hook. Slowest of three.
    const bodyCost = new Map<unknown, number>();
    for (const b of hostile)
      bodyCost.set(b, Math.max(...[await post('/verify', b), await post('/verify', b), await post('/verify', b)].map((r) => r.ms)));

    let done = false;
    const drops: Array<{ ms: number; code?: string; body: unknown }> = [];
    const attack = (async () => {
      // The first round runs each schema on the validation thread; the later rounds are the same
      // sellers' next settlements, answered from the validator's memory of its verdicts.
      for (let round = 0; round < 4; round++) for (const b of hostile) drops.push({ ...(await post('/settle', b)), body: b });
      // A validation thread starved of CPU (other work on every core) may leave a schema unjudged in
      // all four rounds; the seller's next settlements are judged once it gets CPU, so they continue
      // until each schema has its verdict, for at most 30 s (a condition, not a share of the CPU).
      const until = performance.now() + 30_000;
      let unjudged = hostile.filter((b) => !drops.some((d) => d.body === b && d.code === 'bazaar_schema_too_complex'));
      while (unjudged.length > 0 && performance.now() < until) {
        for (const b of unjudged) drops.push({ ...(await post('/settle', b)), body: b });
        unjudged = unjudged.filter((b) => !drops.some((d) => d.body === b && d.code === 'bazaar_schema_too_complex'));
      }
      done = true;
    })();
    const loaded = { verify: [] as number[], settle: [] as number[] };
    while (!done) {
      loaded.verify.push((await post('/verify')).ms);
      loaded.settle.push((await post('/settle')).ms);
    }
    await attack;

    expect(loaded.verify.length).toBeGreaterThan(10);
    // The bounds hold on a machine with a core to spare. Overloaded (other suites sharing the
    // cores), timers and thread start-up are late by seconds whatever svc does; the test then
    // still proves the codes, and a bound a blocking validation (seconds per schema) exceeds.
    const overloaded = loadavg()[0]! > cpus().length;
    if (overloaded) console.log(`load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores: latency bounds relaxed 4×`);
    if (!overloaded) expect(drops.map((d) => d.code)).toEqual(drops.map(() => 'bazaar_schema_too_complex'));
    else {
      // A validation thread starved of CPU gives no verdict (docs/CATALOG.md "Not judged is not
      // refused": no `bazaar` entry, the journal retries the hook later). Overloaded, an attempt may
      // end so, but never with another code, and each hostile schema is judged in one of its rounds
      // (the four, or the ones that continued until it was).
      expect(drops.filter((d) => d.code !== undefined && d.code !== 'bazaar_schema_too_complex')).toEqual([]);
      expect(hostile.filter((b) => !drops.some((d) => d.body === b && d.code === 'bazaar_schema_too_complex'))).toEqual([]);
    }
    const factor = overloaded ? 4 : 1;
    // A drop measured from outside is the 250 ms hook budget plus the request's own round trip
    // (what a schema-less settle costs, and what carrying this body costs), with 20 ms for timer
    // granularity.
    const dropBound = (body: unknown) => factor * (250 + median(normal.settle) + bodyCost.get(body)! + 20);
    expect(
      drops
        .filter((d) => d.ms >= dropBound(d.body))
        .map((d) => `#${drops.indexOf(d)}: ${Math.round(d.ms)} ms (bound ${Math.round(dropBound(d.body))})`),
    ).toEqual([]);
    // 2× of normal, with 3 ms of slack for timer granularity.
    expect(median(loaded.verify)).toBeLessThan(factor * 2 * median(normal.verify) + 3);
    expect(median(loaded.settle)).toBeLessThan(factor * 2 * median(normal.settle) + 3);
  }, 120_000);
});
