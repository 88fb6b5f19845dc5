/**
 * A page served from another origin, in Chromium, uses svc (openapi.yaml "Browsers on other
 * origins"): it reads GET /discovery/search and calls POST /mcp (a JSON body, so the browser sends
 * a CORS preflight first), and the browser keeps it from reading POST /verify.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let svc: TestServer;
let page: http.Server;
let pageUrl: string;
let browser: Browser;

beforeAll(async () => {
  svc = await startTestServer();
  page = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>catalog page</title>'),
  );
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => page?.close(r));
  await svc?.close();
});

it('a page of another origin reads GET /discovery/search and calls POST /mcp; POST /verify stays closed to it', async () => {
  expect(new URL(pageUrl).origin).not.toBe(new URL(svc.url).origin);
  const tab = await browser.newPage();
  await tab.goto(pageUrl);
  const answers = await tab.evaluate(async (base: string) => {
    const search = await fetch(`${base}/discovery/search?query=weather`).then(async (r) => ({ status: r.status, body: await r.json() }));
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as { result: { tools: Array<{ name: string }> } },
      requestId: r.headers.get('x-request-id'),
    }));
    const verify = await fetch(`${base}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(
      (r) => `read ${r.status}`,
      (err: Error) => `refused: ${err.name}`,
    );
    return { search, mcp, verify };
  }, svc.url);
  expect(answers.search.status).toBe(200);
  expect(answers.search.body).toMatchObject({ resources: [] });
  expect(answers.mcp.status).toBe(200);
  expect(answers.mcp.body.result.tools.map((t) => t.name)).toEqual(['search_resources']);
  expect(answers.mcp.requestId).toMatch(/./); // an exposed header the page may read
  expect(answers.verify).toBe('refused: TypeError');
}, 60_000);
