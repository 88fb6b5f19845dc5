/**
 * The catalog explorer (GET /, docs/EXPLORER.md) in a real headless Chromium, against svc on the
 * devnet with listings created by real settled payments: search, filters, paging, the detail view
 * (price in units, calling convention, snippets), a seller's page (every listing of one payTo with
 * its signals), keyboard use, and sellers' hostile content rendered as inert text. Screenshots at desktop and phone widths go to test-artifacts/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { startPaidHttpServer } from '../../src/client/seller-http.ts';
import { httpBazaar, mcpBazaar } from '../../src/client/seller.ts';
import { openCatalog, type Catalog } from '../../src/catalog/index.ts';
import { signingKeys } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { EXPLORER_CSP } from '../../src/handlers/pages.ts';
import { encodeResourceId } from '../../src/mcp/resource-id.ts';
import type { PaymentPayload } from '../../src/scheme/types.ts';
import { artifact, launchBrowser } from '../helpers/browser.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { BUSY_MACHINE_BOUNDS } from '../catalog/fixtures.ts';

/** Seller content that would run as script or break the page if it were ever parsed as HTML. */
const HOSTILE = [
  { serviceName: '<script>__pwned=1</script>', description: '<img src=x onerror="window.__pwned=1">', tags: ['"><svg onload=__pwned=1>'] },
  {
    serviceName: '<img src=x onerror=__pwned=1>',
    description: '</script><script>alert(document.cookie)</script> \u202eevil\u202c',
    iconUrl: 'javascript:window.__pwned=1',
    tags: ['<b>bold</b>', '{{constructor.constructor(1)}}'],
  },
  { serviceName: 'javascript:alert(1)', description: `${'W'.repeat(2_000)} no spaces to break on` },
];

interface Seeded {
  name: string;
  resource: string;
  amount: string;
  type: 'http' | 'mcp';
  description: string;
  payTo: string;
}

let h: SchemeHarness;
let server: TestServer;
let catalog: Catalog;
let browser: Browser;
let dir: string;
let sellerAddress: string;
/** A second seller: two listings, one of them paid twice by two buyers (its seller's page). */
let secondSeller: string;
const seeded: Seeded[] = [];
const HONEST = 22;

async function settleListing(
  buyer: Keypair,
  seller: Keypair,
  i: number,
  extra: Record<string, unknown> = {},
  kind: 'http' | 'mcp' = 'http',
  /** false: a further payment of a listing already seeded. */
  record = true,
) {
  const amount = String(10_000 * (i + 1)); // 0.001 USDC × (i + 1)
  const requirements = h.requirements(seller.publicKey(), { amount });
  const paid = await h.pay(requirements, buyer);
  const resource = kind === 'mcp' ? `https://tools${i}.example.com/mcp` : `https://api${i}.example.com/v1/quote`;
  const name = (extra.serviceName as string | undefined) ?? `Service ${i}`;
  const bazaar =
    kind === 'mcp'
      ? mcpBazaar({
          toolName: 'forecast_tool',
          inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] },
        })
      : httpBazaar({
          method: i % 2 ? 'POST' : 'GET',
          inputSchema: { type: 'object', properties: { symbol: { type: 'string', description: 'Ticker symbol' } }, required: ['symbol'] },
          example: { symbol: 'XLM' },
        });
  const paymentPayload: PaymentPayload = {
    ...paid,
    resource: {
      url: resource,
      description: `Quotes and forecasts, listing number ${i}`,
      serviceName: name,
      tags: ['finance', `n${i}`],
      ...extra,
    },
    extensions: { bazaar },
  };
  const res = await api(server.url).post('/settle', { x402Version: 2, paymentPayload, paymentRequirements: requirements });
  expect(res.body.success).toBe(true);
  const outcome = JSON.parse(Buffer.from(res.headers.get('extension-responses') ?? '', 'base64').toString() || '{}');
  expect({ name, outcome: outcome.bazaar }).toEqual({ name, outcome: { status: 'success' } });
  if (record)
    seeded.push({
      name,
      resource,
      amount,
      type: kind,
      description: String(paymentPayload.resource!.description),
      payTo: seller.publicKey(),
    });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-explorer-'));
  h = await SchemeHarness.start(200);
  const submitters = await Promise.all(Array.from({ length: 4 }, () => h.devnet.createAccount({ usdcTrustline: false })));
  const config = testConfig({
    SUBMITTER_SECRET: submitters.map((s) => s.secret).join(','),
    RPC_URL: h.devnet.rpcUrl,
    DB_PATH: join(dir, 'svc.sqlite'),
  });
  const scheme = new ExactStellarScheme({
    network: config.network,
    rpc: createSdkRpc({ url: h.devnet.rpcUrl, timeoutMs: 5_000 }),
    submitters: signingKeys(config).submitters,
  });
  // The catalog with the deadlines and seller-schema bound tests that write many listings use
  // (test/catalog/fixtures.ts): on a loaded machine a starved schema thread must not leave a
  // seeded listing unlisted (this server has no journal to list it later).
  catalog = openCatalog({ dbPath: join(dir, 'catalog.sqlite'), logger: silentLogger(), ...BUSY_MACHINE_BOUNDS });
  [server, browser] = await Promise.all([startTestServer({ config, scheme, catalog }), launchBrowser()]);
  const { buyer, seller } = await h.parties(100_000_000n);
  sellerAddress = seller.publicKey();
  // Four at a time (four submitters settle them within a ledger), in order of their numbers: the
  // explorer lists newest first, so the later listings are the first page's (Service 21's
  // screenshot) whatever the order within four. One after another, the 28 took about 10 s.
  for (let i = 0; i < HONEST; i += 4)
    await Promise.all(Array.from({ length: Math.min(4, HONEST - i) }, (_, k) => settleListing(buyer, seller, i + k)));
  await Promise.all([
    settleListing(buyer, seller, HONEST, { serviceName: 'Weather tool' }, 'mcp'),
    ...HOSTILE.map((content, k) => settleListing(buyer, seller, HONEST + 1 + k, content)),
  ]);
  const second = await h.parties(50_000_000n);
  secondSeller = second.seller.publicKey();
  await Promise.all([
    settleListing(buyer, second.seller, 40, { serviceName: 'Second shop A' }),
    settleListing(buyer, second.seller, 41, { serviceName: 'Second shop B' }),
  ]);
  await settleListing(second.buyer, second.seller, 40, { serviceName: 'Second shop A' }, 'http', false);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await catalog?.close();
  await h?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A page on the explorer that fails the test on any dialog, page error or console error. */
async function openExplorer(width = 1280, height = 900): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width, height } });
  const problems: string[] = [];
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${server.url}/`);
  await page.locator('#results .listing').first().waitFor();
  return { page, problems };
}

/** Runs `each` on every page of results, following "Next page" until it is disabled. */
async function eachPage(page: Page, each: () => Promise<void>): Promise<void> {
  for (;;) {
    await each();
    if (await page.locator('#next').isDisabled()) return;
    const before = await page.locator('#page-label').textContent();
    await page.locator('#next').click();
    // A page is a round trip to svc: on a loaded machine it can take longer than poll's default second.
    await expect.poll(() => page.locator('#page-label').textContent(), { timeout: 10_000 }).not.toBe(before);
  }
}

const names = (page: Page) => page.locator('#results .listing .name').allTextContents();

describe('the explorer page', () => {
  it('is served under its Content-Security-Policy with the known assets embedded', async () => {
    const res = await api(server.url).get('/');
    expect(res.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
    expect(res.text).toContain(h.devnet.usdc.contractId);
    expect(res.text).toContain('"decimals":7');
  });

  it('browses every listing exactly once through the offset pages', async () => {
    const { page, problems } = await openExplorer();
    await expect.poll(() => page.locator('#status').textContent()).toBe(`${seeded.length} listings`);
    // Agents are shown the hosted MCP endpoint of this svc (docs/MCP.md "Hosted discovery").
    expect(await page.locator('#mcp-url').textContent()).toBe(`${server.url}/mcp`);
    const seen: string[] = [];
    await eachPage(page, async () => {
      seen.push(...(await names(page)));
    });
    expect(seen).toHaveLength(seeded.length);
    expect(new Set(seen).size).toBe(seeded.length);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('searches as you type and walks the search cursor pages exactly once', async () => {
    const { page, problems } = await openExplorer();
    await page.locator('#query').pressSequentially('quotes forecasts', { delay: 20 });
    // The whole query's answer: on a busy machine a pause between keystrokes can outlast the typing
    // delay, so a prefix ("quotes") may be answered first, and its page's Next would then race the
    // last keystroke's search, which starts again from page 1.
    await expect.poll(() => page.locator('#status').textContent()).toContain('Results for “quotes forecasts”');
    const seen: string[] = [];
    await eachPage(page, async () => {
      seen.push(...(await names(page)));
    });
    expect(new Set(seen).size).toBe(seen.length);
    // Every listing whose description has both words, once (the hostile ones replaced theirs).
    expect(seen.sort()).toEqual(
      seeded
        .filter((l) => l.description.startsWith('Quotes and forecasts'))
        .map((l) => l.name)
        .sort(),
    );
    // A word only one listing has finds it first.
    await page.locator('#query').fill('number 7');
    await expect.poll(async () => (await names(page))[0]).toBe('Service 7');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('filters narrow: type mcp leaves the one MCP tool; an unknown payTo leaves nothing', async () => {
    const { page, problems } = await openExplorer();
    await page.locator('#filter-type').selectOption('mcp');
    await expect.poll(() => names(page)).toEqual(['Weather tool']);
    await page.locator('#filter-type').selectOption('');
    await expect.poll(() => page.locator('#status').textContent()).toBe(`${seeded.length} listings`);
    // A partial address asks nothing yet (svc refuses one: openapi.yaml PayeeAddress) and says so.
    await page.locator('#filter-payTo').fill('GABC');
    await expect
      .poll(() => page.locator('#status').textContent())
      .toBe('Pays to takes a whole Stellar address: G…, C… or M…, in capitals.');
    await page.locator('#filter-payTo').fill('');
    await expect.poll(() => page.locator('#status').textContent()).toBe(`${seeded.length} listings`);
    // "Pays to" applies as it is typed, like the search box: no Enter, no leaving the field.
    await page.locator('#filter-payTo').pressSequentially(Keypair.random().publicKey(), { delay: 5 });
    await expect.poll(() => page.locator('#status').textContent()).toBe('No listing matches these filters.');
    expect(await page.evaluate<string>('document.activeElement?.id')).toBe('filter-payTo');
    expect(await names(page)).toEqual([]);
    // The seller's own address lists its listings again; in a search too, an unmatched address says so.
    await page.locator('#filter-payTo').fill(sellerAddress);
    const own = seeded.filter((s) => s.payTo === sellerAddress).length;
    await expect.poll(() => page.locator('#status').textContent()).toBe(`${own} listings`);
    await page.locator('#filter-payTo').fill(Keypair.random().publicKey());
    await page.locator('#query').fill('weather');
    await expect.poll(() => page.locator('#status').textContent()).toBe('No listing matches “weather” with these filters.');
    expect(await page.locator('#filter-network option').allTextContents()).toEqual(['Any', 'stellar:testnet']);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('the price filter (asset, max price in its units) narrows exactly; each listing shows its payments, payers and last paid time', async () => {
    const { page, problems } = await openExplorer();
    await page.locator('#filter-maxPrice').fill('0.005');
    await expect.poll(() => page.locator('#status').textContent()).toBe('Choose an asset to filter by price.');
    await page.locator('#filter-asset').selectOption(h.devnet.usdc.contractId);
    // Listing i costs 0.001 USDC × (i + 1): 0.005 USDC admits listings 0 to 4, exactly.
    await expect.poll(() => page.locator('#status').textContent()).toBe('5 listings');
    expect((await names(page)).sort()).toEqual(['Service 0', 'Service 1', 'Service 2', 'Service 3', 'Service 4']);
    // One settled payment each, by one buyer.
    const first = page.locator('#results .listing', { hasText: 'Service 3' });
    expect(await first.locator('.demand').textContent()).toBe('1 payment by 1 payer in 30 days');
    await first.click();
    const detail = page.locator('#detail');
    await expect.poll(() => detail.locator('h2').textContent()).toBe('Service 3');
    expect(await detail.locator('.payments').textContent()).toBe('1');
    expect(await detail.locator('.payers').textContent()).toBe('1');
    // Not checked by svc since it was paid (docs/CATALOG.md "Liveness").
    expect(await detail.locator('.liveness').textContent()).toBe('not checked since last paid');
    expect(await detail.locator('.last-paid time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    await page.locator('#filter-maxPrice').fill('0.0049999');
    await expect.poll(() => page.locator('#status').textContent()).toBe('4 listings');
    await page.locator('#filter-maxPrice').fill('');
    await expect.poll(() => page.locator('#status').textContent()).toBe(`${seeded.length} listings`);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("an error answer shows the ErrorEnvelope's reason and code, not just the status", async () => {
    const { page, problems } = await openExplorer();
    // The browser asks svc for a page it refuses (limit=abc instead of 20): svc's own 400 answer.
    let refusedUrl = '';
    await page.route('**/discovery/resources?*', (route) => {
      refusedUrl = route.request().url().replace('limit=20', 'limit=abc');
      return route.continue({ url: refusedUrl });
    });
    await page.locator('#filter-type').selectOption('http');
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/^The catalog refused the request: /);
    const answer = await api(server.url).get(refusedUrl.slice(server.url.length));
    expect(answer.status).toBe(400);
    expect(await page.locator('#status').textContent()).toBe(
      `The catalog refused the request: ${answer.body.error.reason} (${answer.body.error.code}, HTTP 400)`,
    );
    expect(answer.body.error.code).toBe('svc_invalid_query_parameter');
    expect(await names(page)).toEqual([]);
    // The browser logs the 400 itself as a failed resource load; nothing else went wrong.
    expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    await page.close();
  });

  it('disabled paging buttons look disabled (muted, grey border), enabled ones in the accent colour', async () => {
    const { page, problems } = await openExplorer();
    await expect.poll(() => page.locator('#next').isEnabled()).toBe(true);
    expect(await page.locator('#previous').isDisabled()).toBe(true);
    const style = (id: string) =>
      page.evaluate<{ color: string; border: string; cursor: string }>(
        `(() => { const s = getComputedStyle(document.getElementById('${id}')); return { color: s.color, border: s.borderTopColor, cursor: s.cursor }; })()`,
      );
    // --muted, --line and --accent of explorer.css.
    expect(await style('previous')).toEqual({ color: 'rgb(74, 74, 74)', border: 'rgb(200, 200, 200)', cursor: 'default' });
    expect(await style('next')).toEqual({ color: 'rgb(11, 87, 208)', border: 'rgb(11, 87, 208)', cursor: 'pointer' });
    await page.locator('#next').click();
    await expect.poll(() => page.locator('#next').isDisabled()).toBe(true);
    expect(await style('next')).toEqual({ color: 'rgb(74, 74, 74)', border: 'rgb(200, 200, 200)', cursor: 'default' });
    expect(await style('previous')).toEqual({ color: 'rgb(11, 87, 208)', border: 'rgb(11, 87, 208)', cursor: 'pointer' });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('the detail view: price in USDC, payTo, calling convention as a table, curl and paid_call snippets', async () => {
    const { page, problems } = await openExplorer();
    await page.locator('#query').fill('number 4');
    await page.locator('#results .listing', { hasText: 'Service 4' }).click();
    const detail = page.locator('#detail');
    await expect.poll(() => detail.locator('h2').textContent()).toBe('Service 4');
    // 10,000 × 5 base units at 7 decimals.
    expect(await detail.locator('.price').textContent()).toBe('0.005 USDC (exact on stellar:testnet)');
    const table = await detail.locator('table').innerText();
    expect(table).toMatch(/symbol\s+string\s+yes\s+Ticker symbol/);
    const snippets = await detail.locator('pre').allTextContents();
    expect(snippets[0]).toBe(`curl -i 'https://api4.example.com/v1/quote?symbol=XLM'`);
    const listing = seeded.find((s) => s.name === 'Service 4')!;
    // paid_call's input holds the required parameter, valued from the seller's example.
    expect(JSON.parse(snippets[1]!)).toEqual({
      name: 'paid_call',
      arguments: { resourceId: encodeResourceId({ type: 'http', resource: listing.resource, toolName: '' }), input: { symbol: 'XLM' } },
    });
    // Without an example, a placeholder the reader replaces.
    await page.locator('#query').fill('weather');
    await page.locator('#results .listing', { hasText: 'Weather tool' }).click();
    await expect.poll(() => detail.locator('h2').textContent()).toBe('Weather tool');
    const tool = seeded.find((s) => s.name === 'Weather tool')!;
    expect(JSON.parse((await detail.locator('pre').allTextContents())[1]!)).toEqual({
      name: 'paid_call',
      arguments: {
        resourceId: encodeResourceId({ type: 'mcp', resource: tool.resource, toolName: 'forecast_tool' }),
        input: { city: '<city>' },
      },
    });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('the parameter table breaks no heading, type or name inside a word, at desktop and phone widths', async () => {
    for (const [width, height] of [
      [1280, 900],
      [1024, 768],
      [390, 844],
    ] as const) {
      const { page, problems } = await openExplorer(width, height);
      await page.locator('#query').fill('number 4');
      await page.locator('#results .listing', { hasText: 'Service 4' }).click();
      await page.locator('#detail table').waitFor();
      // A word broken across lines is a text node of two or more line boxes.
      const broken = await page.evaluate<string[]>(`[...document.querySelectorAll('#detail th, #detail td')]
        .filter((cell) => cell.cellIndex < 3)
        .filter((cell) => [...cell.querySelectorAll('*')].concat(cell).flatMap((e) => [...e.childNodes]).some((node) => {
          if (node.nodeType !== Node.TEXT_NODE) return false;
          const range = document.createRange();
          range.selectNodeContents(node);
          return range.getClientRects().length > 1;
        }))
        .map((cell) => cell.textContent)`);
      expect({ width, broken }).toEqual({ width, broken: [] });
      expect(await page.locator('#detail th').allTextContents()).toEqual(['Parameter', 'Type', 'Required', 'Description']);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it('works from the keyboard: type, Tab to a result, Enter opens the detail, Escape returns', async () => {
    const { page, problems } = await openExplorer();
    await page.locator('#query').focus();
    await page.keyboard.type('weather');
    await expect.poll(async () => (await names(page))[0]).toBe('Weather tool');
    for (let i = 0; i < 8 && !(await page.evaluate<boolean>("document.activeElement?.classList.contains('listing') === true")); i++)
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate<string>('document.activeElement?.id')).toBe('detail');
    expect(await page.locator('#detail').innerText()).toContain('MCP tool forecast_tool');
    await page.keyboard.press('Escape');
    expect(await page.locator('#detail').isHidden()).toBe(true);
    expect(await page.evaluate<boolean>("document.activeElement?.classList.contains('listing') === true")).toBe(true);
    // Every form control has a label.
    const unlabeled = await page.evaluate<string[]>(
      '[...document.querySelectorAll(\'input, select\')].filter((c) => !document.querySelector(`label[for="${c.id}"]`)).map((c) => c.id)',
    );
    expect(unlabeled).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders hostile seller content as inert text at desktop and phone widths', async () => {
    for (const [width, height, label] of [
      [1280, 900, 'desktop'],
      [390, 844, 'phone'],
    ] as const) {
      const { page, problems } = await openExplorer(width, height);
      // Walk the browse pages and open each hostile listing where it appears.
      const opened: string[] = [];
      await eachPage(page, async () => {
        for (const hostile of HOSTILE) {
          const entry = page.locator('#results .listing').filter({ has: page.locator('.name', { hasText: hostile.serviceName }) });
          if ((await entry.count()) === 0) continue;
          await entry.first().click();
          await expect.poll(() => page.locator('#detail h2').textContent()).toBe(hostile.serviceName);
          expect(await page.locator('#detail .description').textContent()).toBe(hostile.description);
          expect(await page.locator('#detail .tags li').allTextContents()).toEqual(
            hostile.tags ?? ['finance', expect.stringMatching(/^n\d+$/)],
          );
          opened.push(hostile.serviceName);
        }
      });
      expect(opened.sort()).toEqual(HOSTILE.map((x) => x.serviceName).sort());
      expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
      expect(await page.locator('script').count()).toBe(2); // the page's own data block and module
      expect(await page.locator('img').count()).toBe(0); // no hostile image element, no javascript: icon
      // No horizontal scrolling: long unbroken seller text wraps.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await page.screenshot({ path: artifact(`explorer-hostile-${label}.png`), fullPage: true });
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it('check my listing: a paid route would be listed; a free one and a private host are not, each with its code and reason', async () => {
    const seller = await startPaidHttpServer({
      facilitator: createFacilitatorClient(server.url),
      routes: [
        {
          method: 'GET',
          path: '/forecast',
          accepts: [
            {
              scheme: 'exact',
              network: 'stellar:testnet',
              asset: h.devnet.usdc.contractId,
              amount: '15000',
              payTo: sellerAddress,
              maxTimeoutSeconds: 60,
              extra: { areFeesSponsored: true },
            },
          ],
          description: 'A forecast to check',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
          example: { city: 'Porto' },
          handle: () => ({ status: 200, body: { ok: true } }),
        },
        { method: 'GET', path: '/free', accepts: [], handle: () => ({ status: 200, body: { free: true } }) },
      ],
    });
    const { page, problems } = await openExplorer();
    try {
      const check = async (url: string) => {
        await page.locator('#check-url').fill(url);
        await page.locator('#check-form button[type=submit]').click();
        await expect.poll(() => page.locator('#check-result').textContent(), { timeout: 20_000 }).toMatch(/^Would /);
        return page.locator('#check-result').textContent();
      };
      const listed = await check(seller.urlOf('/forecast'));
      expect(listed).toMatch(/^Would be listed/);
      expect(await page.locator('#check-result .checks li').count()).toBe(5);
      expect(listed).toContain(`Listed as ${seller.urlOf('/forecast')}`);

      expect(await check(seller.urlOf('/free'))).toMatch(
        /^Would not be listed\.Problemssvc_validate_no_payment_required .*answered HTTP 200 without asking for payment/,
      );
      const privateHost = await check('http://10.1.2.3/weather');
      expect(privateHost).toMatch(/svc_validate_target_forbidden/);
      expect(privateHost).toMatch(/ALLOW_PRIVATE_TARGETS/);
      await page.screenshot({ path: artifact('explorer-check-listing.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await seller.close();
    }
  });

  it("a seller's page: a listing's payTo link opens every listing of that payTo with its payments, payers and last paid time", async () => {
    const { page, problems } = await openExplorer();
    await page.locator('#query').fill('second shop');
    await expect.poll(() => page.locator('#status').textContent()).toContain('Results for');
    await page.locator('#results .listing', { hasText: 'Second shop A' }).click();
    await page.locator('#detail .seller-link').first().click();
    const view = page.locator('#seller');
    await expect.poll(() => view.locator('.seller-summary').textContent()).toMatch(/^2 listings · 3 payments in 30 days · last paid /);
    expect(page.url()).toBe(`${server.url}/#seller=${secondSeller}`);
    expect(await view.locator('h2 code').textContent()).toBe(secondSeller);
    expect(await page.locator('#search-form').isVisible()).toBe(false);
    expect(await page.locator('#results').isVisible()).toBe(false);
    // Most paid first; each row's signals are the listing's quality as the API answers it.
    const rows = view.locator('tbody tr');
    expect(await rows.locator('.open-listing').allTextContents()).toEqual(['Second shop A', 'Second shop B']);
    const listed = (await api(server.url).get(`/discovery/resources?payTo=${secondSeller}`)).body.items as Array<{
      resource: string;
      quality: { l30DaysTotalCalls: number; l30DaysUniquePayers: number; lastCalledAt: string };
    }>;
    for (const [i, resource] of ['https://api40.example.com/v1/quote', 'https://api41.example.com/v1/quote'].entries()) {
      const quality = listed.find((l) => l.resource === resource)!.quality;
      expect(await rows.nth(i).locator('.resource').textContent()).toBe(resource);
      expect(await rows.nth(i).locator('.payments').textContent()).toBe(String(quality.l30DaysTotalCalls));
      expect(await rows.nth(i).locator('.payers').textContent()).toBe(String(quality.l30DaysUniquePayers));
      expect(await rows.nth(i).locator('.last-paid time').getAttribute('datetime')).toBe(quality.lastCalledAt);
    }
    expect([await rows.nth(0).locator('.payments').textContent(), await rows.nth(0).locator('.payers').textContent()]).toEqual(['2', '2']);
    // A listing opens from the seller's page.
    await rows.nth(1).locator('.open-listing').click();
    await expect.poll(() => page.locator('#detail h2').textContent()).toBe('Second shop B');
    await page.screenshot({ path: artifact('explorer-seller.png') });
    // Back to the catalog.
    await view.locator('.back').click();
    await expect.poll(() => page.locator('#search-form').isVisible()).toBe(true);
    expect(await view.isHidden()).toBe(true);
    // By its address: the first seller's page lists every one of its listings once, hostile names as text.
    await page.goto(`${server.url}/#seller=${sellerAddress}`);
    const own = seeded.filter((s) => s.payTo === sellerAddress);
    await expect.poll(() => view.locator('.seller-summary').textContent()).toMatch(new RegExp(`^${own.length} listings · `));
    expect((await view.locator('tbody .open-listing').allTextContents()).sort()).toEqual(own.map((s) => s.name).sort());
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await page.goto(`${server.url}/#seller=${Keypair.random().publicKey()}`);
    await expect.poll(() => view.locator('.seller-summary').textContent()).toBe('No listing pays to this address.');
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a seller's page at desktop width: the table fills the content column, no name or URL broken across lines, no column clipped", async () => {
    for (const payTo of [secondSeller, sellerAddress]) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${server.url}/#seller=${payTo}`);
      const rows = seeded.filter((s) => s.payTo === payTo).length;
      await expect.poll(() => page.locator('#seller tbody tr').count()).toBe(rows);
      const layout = await page.evaluate<{ content: number; table: number; scroll: number; box: number; broken: string[] }>(`(() => {
        const lines = (element) => { const range = document.createRange(); range.selectNodeContents(element); return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size; };
        const box = document.querySelector('#seller .table-scroll');
        return {
          content: document.querySelector('main').clientWidth,
          table: document.querySelector('#seller table').getBoundingClientRect().width,
          scroll: box.scrollWidth,
          box: box.clientWidth,
          broken: [...document.querySelectorAll('#seller .open-listing, #seller .resource')].filter((e) => lines(e) > 1).map((e) => e.textContent),
        };
      })()`);
      expect(layout.table).toBeGreaterThanOrEqual(layout.content - 2);
      expect(layout.scroll).toBeLessThanOrEqual(layout.box);
      expect(layout.broken).toEqual([]);
      if (payTo === secondSeller) await page.screenshot({ path: artifact('explorer-seller-desktop.png') });
      await page.close();
    }
  });

  it("a seller's page for something that is not an address says so, asks the catalog nothing and prints no null", async () => {
    const { page, problems } = await openExplorer();
    const asked: string[] = [];
    page.on('request', (r) => asked.push(r.url()));
    for (const notAddress of ['not-an-address', 'GABC', sellerAddress.toLowerCase()]) {
      await page.goto(`${server.url}/#seller=${encodeURIComponent(notAddress)}`);
      const view = page.locator('#seller');
      await expect
        .poll(() => view.locator('.seller-summary').textContent())
        .toMatch(/^This is not a seller address: a Stellar address starts with G/);
      expect(await view.locator('h2 code').textContent()).toBe(notAddress);
      expect(await view.innerText()).not.toMatch(/\bnull\b|undefined/);
      expect(await view.locator('table').count()).toBe(0);
    }
    expect(asked.filter((url) => url.includes('/discovery/resources') && url.includes('payTo'))).toEqual([]);
    // An address no listing pays to: no table, and no stray text where the table would be.
    await page.goto(`${server.url}/#seller=${Keypair.random().publicKey()}`);
    await expect.poll(() => page.locator('#seller .seller-summary').textContent()).toBe('No listing pays to this address.');
    expect(await page.locator('#seller').innerText()).not.toMatch(/\bnull\b|undefined/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('on a 390 px phone the first listings show on the first screen; the filters fold under their summary and still apply', async () => {
    const { page, problems } = await openExplorer(390, 844);
    const first = await page.locator('#results .listing').first().boundingBox();
    expect(first!.y + first!.height).toBeLessThanOrEqual(844);
    expect(await page.locator('#filter-type').isVisible()).toBe(false);
    await page.screenshot({ path: artifact('explorer-phone-first-screen.png') });
    await page.locator('#filters summary').click();
    await page.locator('#filter-type').selectOption('mcp');
    await expect.poll(() => names(page)).toEqual(['Weather tool']);
    expect(await page.locator('#filters summary').textContent()).toBe('Filters (1 in use)');
    // Folded again, the summary still says a filter is in use.
    await page.locator('#filters summary').click();
    expect(await page.locator('#filter-type').isVisible()).toBe(false);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('screenshots of the listing page at desktop and phone widths', async () => {
    for (const [width, height, label] of [
      [1280, 900, 'desktop'],
      [390, 844, 'phone'],
    ] as const) {
      const { page } = await openExplorer(width, height);
      await page.locator('#results .listing', { hasText: 'Service 21' }).click();
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: artifact(`explorer-${label}.png`), fullPage: width < 600 });
      await page.close();
    }
  });
});
