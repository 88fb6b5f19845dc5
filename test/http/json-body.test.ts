/**
 * jsonObjectBody (src/http/middleware.ts) reads an identity-encoded body of declared length itself
 * and every other body through co-body. Both must answer alike: the same body is sent over real
 * HTTP once with Content-Length and once chunked, and the two answers compared.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fc } from '@fast-check/vitest';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBoundary, jsonObjectBody, type SvcState } from '../../src/http/middleware.ts';
import { silentLogger } from '../../src/log.ts';

let server: http.Server;
let port: number;

beforeAll(async () => {
  const app = new Koa<SvcState>();
  app.use(async (ctx, next) => {
    ctx.state.log = silentLogger();
    await next();
  });
  app.use(errorBoundary());
  app.use(jsonObjectBody());
  app.use((ctx) => {
    let body: string;
    try {
      body = JSON.stringify(ctx.request.body);
    } catch {
      body = 'nested too deep to echo';
    }
    ctx.body = { body, rawBody: ctx.request.rawBody };
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Status and text of POST / with `bytes`, declared by Content-Length or sent chunked. */
function post(bytes: Buffer, framing: 'length' | 'chunked'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (framing === 'length') headers['content-length'] = String(bytes.length);
    else headers['transfer-encoding'] = 'chunked';
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    // Two writes, so a chunked body arrives in more than one chunk.
    req.write(bytes.subarray(0, bytes.length >> 1));
    req.end(bytes.subarray(bytes.length >> 1));
  });
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Body texts of every kind the reader must judge: JSON objects and others, `__proto__` keys, broken text. */
const bodies = fc.oneof(
  fc.json().map((text) => Buffer.from(text)),
  fc.dictionary(fc.string(), fc.jsonValue()).map((o) => Buffer.from(JSON.stringify(o))),
  fc
    .tuple(fc.constantFrom('"__proto__"', '"\\u005f_proto__"', '"__pr\\u006fto__"', '"__proto_"', '"proto"'), fc.jsonValue(), fc.boolean())
    .map(([key, value, nested]) => {
      const inner = `{${key}:${JSON.stringify(value)}}`;
      return Buffer.from(nested ? `{"a":[1,${inner}]}` : inner);
    }),
  fc.json().map((text) => Buffer.concat([BOM, Buffer.from(text)])),
  fc.json().chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => Buffer.from(text.slice(0, cut) || ' '))),
  fc.tuple(fc.json(), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([text, junk]) => {
    const bytes = Buffer.from(text);
    const at = bytes.length >> 1;
    return Buffer.concat([bytes.subarray(0, at), Buffer.from(junk), bytes.subarray(at)]);
  }),
  fc.constantFrom(' ', '\n\t ', 'null', '[]', '"{}"', '{"a":"\\ud800"}', '{"é":"ü"}').map((text) => Buffer.from(text)),
);

describe('jsonObjectBody: a body of declared length is read as co-body reads a chunked one', () => {
  it('answers the same status and body for generated bodies', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (bytes) => {
        const declared = await post(bytes, 'length');
        const chunked = await post(bytes, 'chunked');
        expect(declared).toEqual(chunked);
      }),
      { numRuns: 400 },
    );
  });

  it('judges a body nested as deep as its size allows (a walk on the call stack would overflow)', async () => {
    const depth = 100_000;
    const nested = (inner: string) => Buffer.from(`{"a":${'['.repeat(depth)}${inner}${']'.repeat(depth)}}`);
    for (const inner of ['1', '{"__proto__":1}']) {
      const declared = await post(nested(inner), 'length');
      expect(declared).toEqual(await post(nested(inner), 'chunked'));
      expect(declared.status).toBe(inner === '1' ? 200 : 400);
    }
  });

  it('drops a leading byte-order mark and refuses an escaped __proto__ key, as co-body does', async () => {
    const withBom = await post(Buffer.concat([BOM, Buffer.from('{"a":1}')]), 'length');
    expect(withBom.status).toBe(200);
    expect(JSON.parse(withBom.text)).toEqual({ body: '{"a":1}', rawBody: '{"a":1}' });
    const escaped = await post(Buffer.from('{"b":{"\\u005f_proto__":{"x":1}}}'), 'length');
    expect(escaped.status).toBe(400);
    expect(JSON.parse(escaped.text).error.reason).toMatch(/__proto__/);
  });
});
