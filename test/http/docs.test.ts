/**
 * GET /docs, the API reference page (openapi.yaml, src/handlers/pages.ts): served by svc from its
 * own npm dependency, checked against the contract, and rendered by a real Chromium that may reach
 * nothing but svc (every request the page makes is recorded; none may leave svc's origin).
 */
import { readFileSync } from 'node:fs';
import { Keypair } from '@stellar/stellar-sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiReferenceScriptFile, DOCS_CSP } from '../../src/handlers/pages.ts';
import { artifact, launchBrowser } from '../helpers/browser.ts';
import { api, openapiDocument } from '../helpers/contract.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { settlement, tempCatalog } from '../catalog/fixtures.ts';

let server: TestServer;
let browser: Browser;
let catalog: ReturnType<typeof tempCatalog>;

/** The seller of `npm run dev`'s demo listings: a new account each run, so no example in openapi.yaml names it. */
const DEV_SELLER = Keypair.random().publicKey();

/** The listings of `npm run dev`'s demo sellers (src/dev/sellers.ts), as its catalog holds them. */
const DEV_LISTINGS = [
  {
    url: 'https://sellers.dev.example/weather',
    description: 'Current weather for a city: sky and temperature, metric or imperial.',
    serviceName: 'Demo Weather',
    tags: ['weather', 'forecast', 'demo'],
  },
  {
    url: 'https://sellers.dev.example/summarize',
    description: 'Summarize a text to its first words (a stand-in for a paid AI endpoint).',
    serviceName: 'Demo Summarizer',
  },
  {
    url: 'https://sellers.dev.example/mcp',
    description: 'Convert an amount between currencies (USD, EUR, GBP, JPY, XLM) at demo exchange rates.',
    serviceName: 'Demo FX',
    mcpTool: 'convert_currency',
  },
];

beforeAll(async () => {
  catalog = tempCatalog();
  for (const listing of DEV_LISTINGS) {
    expect(await catalog.catalog.recordSettlement(settlement({ ...listing, payTo: DEV_SELLER }))).toEqual({ status: 'success' });
    catalog.tick(1000);
  }
  [server, browser] = await Promise.all([startTestServer({ catalog: catalog.catalog }), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  catalog?.close();
});

describe('GET /docs', () => {
  it('is an HTML page with a same-origin Content-Security-Policy that loads the renderer and /docs/openapi.json', async () => {
    const res = await api(server.url).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(res.text).toContain('<script src="/docs/api-reference.js"></script>');
    expect(res.text).toContain('data-url="/docs/openapi.json"');
    expect(res.text).not.toMatch(/https?:\/\//);
  });

  it('/docs/openapi.json is openapi.yaml but for the merchant payTo example, the newest listing’s seller', async () => {
    const res = await api(server.url).get('/docs/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const merchantPayTo = (doc: any) => doc.paths['/discovery/merchant'].get.parameters.find((p: any) => p.name === 'payTo');
    expect(merchantPayTo(openapiDocument).example).not.toBe(DEV_SELLER);
    expect(merchantPayTo(res.body).example).toBe(DEV_SELLER);
    // Nothing else differs.
    merchantPayTo(res.body).example = merchantPayTo(openapiDocument).example;
    expect(res.body).toEqual(openapiDocument);
  });

  it('/docs/openapi.json of an empty catalog keeps the document’s own example', async () => {
    const empty = tempCatalog();
    const bare = await startTestServer({ catalog: empty.catalog });
    try {
      const res = await api(bare.url).get('/docs/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(openapiDocument);
    } finally {
      await bare.close();
      empty.close();
    }
  });

  it('/docs/api-reference.js is the installed package file, cacheable', async () => {
    const res = await api(server.url).get('/docs/api-reference.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(res.text).toBe(readFileSync(apiReferenceScriptFile(), 'utf8'));
  });

  // One page load of the reference serves the rendering checks and the Test Requests on GET
  // /supported and GET / after them (Scalar parses its 4.3 MB script and renders every operation per load).
  let reference: { page: Page; requests: string[]; problems: string[] } | undefined;
  afterAll(() => reference?.page.close());
  /** The URLs of recorded requests (`METHOD url`) that leave svc's origin. */
  const foreign = (requests: string[]) =>
    requests
      .map((r) => r.slice(r.indexOf(' ') + 1))
      .filter((u) => !u.startsWith(server.url) && !u.startsWith('data:') && !u.startsWith('blob:'));
  /**
   * Opens the request client of the operation whose id ends with `id` (another open one closed
   * first) and returns its Send button. Scalar renders an operation's request example once it
   * scrolls into view.
   */
  const openTestRequest = async (page: Page, id: string, method: 'get' | 'post') => {
    await page.keyboard.press('Escape');
    const operation = page.locator(`[id$="${id}"]`);
    await operation.waitFor({ timeout: 30_000 });
    await operation.scrollIntoViewIfNeeded();
    await operation.getByRole('button', { name: /Test Request/ }).click({ timeout: 30_000 });
    const send = page.getByRole('button', { name: new RegExp(`Send ${method} request to`) });
    await send.waitFor({ timeout: 30_000 });
    return send;
  };

  it('renders every operation in Chromium, offline: no request leaves svc, no CSP violation, no page error', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    reference = { page, requests: [], problems: [] };
    const { requests, problems } = reference;
    page.on('request', (r) => requests.push(`${r.method()} ${r.url()}`));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${server.url}/docs`);
    const summaries = Object.values<any>(openapiDocument.paths).flatMap((item) =>
      Object.values<any>(item).map((op) => op.summary as string),
    );
    expect(summaries.length).toBeGreaterThan(10);
    await page.getByText(summaries[0]!).first().waitFor({ timeout: 30_000 });
    const text = await page.locator('body').innerText();
    expect(summaries.filter((summary) => !text.includes(summary))).toEqual([]);
    // Scalar's hosted features are configured away: the page is the reference only.
    expect(text).not.toMatch(/Ask AI|Generate MCP|Developer Tools/);
    await page.screenshot({ path: artifact('docs-desktop.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: artifact('docs-phone.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(foreign(requests)).toEqual([]);
    expect(requests).toContain(`GET ${server.url}/docs/openapi.json`);
    expect(problems).toEqual([]);
  }, 60_000);

  it('Test Request from http://127.0.0.1:<ephemeral port>/docs reaches that svc and shows its 200 answer', async () => {
    // The first server of openapi.yaml is relative, so the page calls the origin it was loaded from:
    // 127.0.0.1 (not localhost) and whatever port this svc got, within `connect-src 'self'`.
    expect(openapiDocument.servers[0]).toMatchObject({ url: '/' });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(reference, 'the page the rendering test loaded').toBeDefined();
    const { page, requests, problems } = reference!;
    const send = await openTestRequest(page, '/GET/supported', 'get');
    // The request client shows the address it will call: this svc's origin, no {host}:{port} template.
    expect(await send.innerText()).toContain(`Send get request to ${server.url}/`);
    await send.click();
    await expect.poll(() => page.locator('body').innerText(), { timeout: 30_000 }).toMatch(/\b200 OK\b/);
    // The rendered answer is svc's own /supported: its signer address is on screen.
    const signer = (await api(server.url).get('/supported')).body.signers['stellar:*'][0] as string;
    await expect.poll(() => page.locator('body').innerText()).toContain(signer);
    await page.screenshot({ path: artifact('docs-test-request.png') });
    expect(requests).toContain(`GET ${server.url}/supported`);
    expect(foreign(requests)).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  it('Test Request on GET / previews the explorer page (HTML) in its frame, without a CSP violation', async () => {
    expect(reference, 'the page the rendering test loaded').toBeDefined();
    const { page, problems } = reference!;
    await (await openTestRequest(page, '/GET/', 'get')).click();
    await expect.poll(() => page.locator('body').innerText(), { timeout: 30_000 }).toMatch(/\b200 OK\b/);
    // Scalar previews the HTML answer in a sandboxed frame of a blob: URL: it shows the explorer's
    // page, not Chromium's error page for a frame the CSP refused.
    const previewText = async () => {
      for (const frame of page.frames()) {
        if (frame === page.mainFrame()) continue;
        if (frame.url().startsWith('chrome-error:')) return `refused: ${frame.url()}`;
        if (frame.url().startsWith('blob:'))
          return (
            await frame
              .locator('body')
              .innerText()
              .catch(() => '')
          ).slice(0, 200);
      }
      return '(no preview frame)';
    };
    await expect.poll(previewText, { timeout: 30_000 }).toMatch(/catalog/i);
    await page.screenshot({ path: artifact('docs-test-request-explorer.png') });
    // Scalar's frame is sandboxed without scripts (its choice): the page's own script not running there is no fault.
    expect(
      problems.filter((p) => !/because the document's frame is sandboxed and the 'allow-scripts' permission is not set/.test(p)),
    ).toEqual([]);
  }, 120_000);

  // The optional filters' examples are `x-disabled` (openapi.yaml components/examples): Test Request
  // sends only what every request needs, so a newcomer sees the catalog, not an empty page; the
  // merchant's required payTo is the catalog's newest seller (GET /docs/openapi.json).
  it.each([
    ['/GET/discovery/resources', '/discovery/resources'],
    ['/GET/discovery/search', '/discovery/search'],
    ['/GET/discovery/merchant', '/discovery/merchant'],
  ])(
    'Test Request on %s sends no filter and answers the catalog’s listings',
    async (id, path) => {
      expect(reference, 'the page the rendering test loaded').toBeDefined();
      const { page, requests, problems } = reference!;
      const send = await openTestRequest(page, id, 'get');
      const before = requests.length;
      await send.click();
      await expect
        .poll(() => requests.slice(before).find((r) => r.startsWith(`GET ${server.url}${path}`)), { timeout: 30_000 })
        .toBeDefined();
      const sent = new URL(
        requests
          .slice(before)
          .find((r) => r.startsWith(`GET ${server.url}${path}`))!
          .slice(4),
      );
      // Only the page parameters and the required query; no filter narrows the catalog.
      expect(
        [...sent.searchParams.keys()].filter((name) => !['limit', 'offset', 'query', 'cursor', 'payTo'].includes(name)),
        sent.href,
      ).toEqual([]);
      if (sent.searchParams.has('payTo')) expect(sent.searchParams.get('payTo')).toBe(DEV_SELLER);
      const answer = await api(server.url).get(`${sent.pathname}${sent.search}`);
      expect(answer.status).toBe(200);
      const listed = ((answer.body.items ?? answer.body.resources) as { resource: string }[]).map((l) => l.resource);
      if (path === '/discovery/merchant') expect(listed).toHaveLength(DEV_LISTINGS.length);
      expect(listed.length, sent.href).toBeGreaterThan(0);
      await expect.poll(() => page.locator('body').innerText(), { timeout: 30_000 }).toMatch(/\b200 OK\b/);
      await expect.poll(() => page.locator('body').innerText(), { timeout: 30_000 }).toContain(listed[0]);
      await page.screenshot({ path: artifact(`docs-test-request${path.replaceAll('/', '-')}.png`) });
      expect(foreign(requests)).toEqual([]);
      expect(problems.filter((p) => !/because the document's frame is sandboxed/.test(p))).toEqual([]);
    },
    120_000,
  );

  // Scalar sends `Accept: application/json` and the first body example: the search.
  it('Test Request on POST /mcp sends its search example and answers the catalog’s listings', async () => {
    expect(reference, 'the page the rendering test loaded').toBeDefined();
    const { page, requests, problems } = reference!;
    const send = await openTestRequest(page, '/POST/mcp', 'post');
    const answers: string[] = [];
    const onResponse = async (r: import('playwright-core').Response) => {
      if (r.url() === `${server.url}/mcp` && r.request().method() === 'POST') answers.push(await r.text());
    };
    page.on('response', onResponse);
    try {
      await send.click();
      await expect.poll(() => answers.length, { timeout: 30_000 }).toBeGreaterThan(0);
    } finally {
      page.off('response', onResponse);
    }
    const hits = (JSON.parse(answers[0]!) as { result?: { structuredContent?: { hits?: { resource: string }[] } } }).result
      ?.structuredContent?.hits;
    expect(hits ?? [], answers[0]!.slice(0, 300)).not.toHaveLength(0);
    await expect.poll(() => page.locator('body').innerText(), { timeout: 30_000 }).toContain(hits![0]!.resource);
    await page.screenshot({ path: artifact('docs-test-request-mcp.png') });
    expect(foreign(requests)).toEqual([]);
    expect(problems.filter((p) => !/because the document's frame is sandboxed/.test(p))).toEqual([]);
  }, 120_000);
});
