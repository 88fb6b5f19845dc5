/**
 * serializeJsonBodies (src/http/json-bodies.ts): a plain object or array set as a body goes out as
 * the same bytes and headers as Koa's own JSON path, other bodies are left to Koa, and answering
 * JSON does not load Node's fetch implementation (the point of it: docs/OPERATIONS.md "Startup").
 * Run in a fresh Node process (type stripping, no loader), because the test runner has loaded
 * fetch long before.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;

/** Serves each body from a Koa app (with or without serializeJsonBodies), GET and HEAD over node:http. */
const script = `
// Not \`import http from 'node:http'\`: an ES import of node:http loads fetch too (scripts/build.mjs).
const http = process.getBuiltinModule('node:http');
import Koa from 'koa';
import { serializeJsonBodies } from './src/http/json-bodies.ts';
const bodies = {
  object: () => ({ status: 'ready', checks: { rpc: { ok: true, detail: 'é ✓' } } }),
  array: () => [1, 'two', null],
  problem: (ctx) => { ctx.type = 'application/problem+json'; return { title: 'x' }; },
  created: (ctx) => { ctx.status = 201; return { id: 1 }; },
  text: () => 'plain',
  buffer: () => Buffer.from('bytes'),
  date: () => new Date(0),
  none: () => null,
};
async function answers(wrap, names) {
  const app = new Koa();
  if (wrap) serializeJsonBodies(app);
  app.use((ctx) => { ctx.body = bodies[ctx.path.slice(1)](ctx); });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const out = {};
  for (const name of names) for (const method of ['GET', 'HEAD']) {
    out[method + ' ' + name] = await new Promise((resolve, reject) => {
      http.request({ port: server.address().port, host: '127.0.0.1', path: '/' + name, method }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const { date, ...headers } = res.headers;
          resolve({ status: res.statusCode, headers, body: Buffer.concat(chunks).toString() });
        });
      }).on('error', reject).end();
    });
  }
  server.close();
  return out;
}
const json = ['object', 'array', 'problem', 'created'];
const wrapped = await answers(true, json);
const fetchLoaded = process.moduleLoadList.some((m) => m.includes('undici'));
Object.assign(wrapped, await answers(true, Object.keys(bodies).filter((name) => !json.includes(name))));
const plain = await answers(false, Object.keys(bodies));
console.log(JSON.stringify({ wrapped, plain, fetchLoaded, fetchLoadedByKoa: process.moduleLoadList.some((m) => m.includes('undici')) }));
`;

describe('serializeJsonBodies', () => {
  it("answers as Koa does, without loading Node's fetch", () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const { wrapped, plain, fetchLoaded, fetchLoadedByKoa } = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(wrapped).toEqual(plain);
    expect(wrapped).toMatchObject({
      'GET object': { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } },
      'HEAD array': { status: 200, headers: { 'content-length': '14' }, body: '' },
      'GET problem': { headers: { 'content-type': 'application/problem+json' }, body: '{"title":"x"}' },
      'GET created': { status: 201 },
      'GET date': { body: '"1970-01-01T00:00:00.000Z"' },
    });
    expect(fetchLoaded).toBe(false);
    // The check above can fail: Koa's own path does load it.
    expect(fetchLoadedByKoa).toBe(true);
  });
});
