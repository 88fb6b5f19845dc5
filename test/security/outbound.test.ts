/**
 * What svc sends to hosts on a stranger's behalf (docs/SECURITY.md "Requests svc makes of sellers'
 * hosts"), black-box: svc over HTTP with origin ownership, settlements through the scripted scheme
 * (the named boundary), and loopback origins on their own addresses (127.0.0.x) that record every
 * request they receive. A settlement declaring POST, PUT or DELETE with a body and a query makes
 * svc send a safe request without either; a route answering only its declared method gets that
 * method without a body, never a redirect followed; 20 paths × 2 payTos on one host, validate
 * beside them, and two instances on one Postgres catalog ask that host at most once per
 * PROBE_HOST_INTERVAL_SECONDS; an honest claim is listed within 5 s beside 120 hanging claims of
 * one payTo; a template escape is refused with bazaar_path_params_invalid and nothing is sent;
 * validate of a URL with a query asks it without the query, and an MCP tool is called with svc's
 * neutral arguments built from the tool's own inputSchema, never a listing's example, default or
 * enum value (the demo MCP seller and a stock McpServer seller behind recording origins).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { encodeX402Header, mcpBazaar } from '../../src/client/seller.ts';
import { startPaidMcpServer } from '../../src/client/seller-mcp.ts';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { api } from '../helpers/contract.ts';
import { FakeScheme, exactKind } from '../helpers/fake-scheme.ts';
import { freshCatalogDatabase } from '../helpers/postgres.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { ASSET, settlement } from '../catalog/fixtures.ts';

const PAY_TO = (letter: string) => `G${letter.repeat(55)}`;
const SQUATTER = PAY_TO('C');
const OTHER = PAY_TO('D');
const HONEST = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';

interface Seen {
  at: number;
  method: string;
  url: string;
  bodyBytes: number;
  body: string;
}
interface Origin {
  base: string;
  seen: Seen[];
  close: () => Promise<void>;
}

/** A loopback origin on `host` that records every request and answers as `answer` says ('hang': never). */
async function startOrigin(
  host: string,
  answer: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => unknown,
): Promise<Origin> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ at: Date.now(), method: req.method ?? '', url: req.url ?? '', bodyBytes: body.length, body: body.toString('utf8') });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://${host}:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const paymentRequired = (url: string, payTo: string) =>
  encodeX402Header({
    x402Version: 2,
    resource: { url },
    accepts: [{ scheme: 'exact', network: 'stellar:testnet', amount: '1000', asset: ASSET, payTo, maxTimeoutSeconds: 60 }],
  });

/** A bazaar extension declaring `method` with an example body (body methods) or query (the others). */
function declaring(method: string, example: Record<string, unknown>, pathParams?: Record<string, unknown>): Record<string, unknown> {
  const body = ['POST', 'PUT', 'PATCH'].includes(method);
  return {
    info: {
      input: {
        type: 'http',
        method,
        ...(body ? { bodyType: 'json', body: example } : { queryParams: example }),
        ...(pathParams ? { pathParams } : {}),
      },
      output: { type: 'json', example: { ok: true } },
    },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { input: { type: 'object' }, output: { type: 'object' } },
      required: ['input'],
    },
  };
}

const scheme = new FakeScheme({
  kinds: [exactKind('stellar:testnet')],
  settle: {
    success: true,
    transaction: 'ef'.repeat(32),
    network: 'stellar:testnet',
    payer: 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG',
  },
});
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function startSvc(env: Record<string, string>): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-outbound-'));
  const server = await startTestServer({
    scheme,
    config: testConfig({ LISTING_OWNERSHIP: 'origin', DB_PATH: join(dir, 'catalog.sqlite'), ...env }),
  });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => server.close());
  return server;
}

/** Settles a payment to `payTo` echoing `bazaar` for `url`; the catalog's answer (EXTENSION-RESPONSES). */
async function settle(svc: TestServer, url: string, payTo: string, bazaar: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await api(svc.url).post('/settle', { x402Version: 2, ...settlement({ url, payTo, bazaar }) });
  expect(res.status).toBe(200);
  const header = res.headers.get('extension-responses');
  return header === null ? {} : (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { bazaar: Record<string, unknown> }).bazaar;
}

const until = async (done: () => boolean | Promise<boolean>, ms: number) => {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
};

/**
 * At most one request per `intervalMs`: svc sends them at least that far apart (a slot runs from the
 * send); the origins record arrivals on the event loop they share with svc, which a busy machine
 * stalls for hundreds of milliseconds, so a gap is judged with half an interval's slack, and the
 * count over a window (flood below) with none.
 */
function expectPaced(seen: Seen[], intervalMs: number): void {
  const times = seen.map((s) => s.at).sort((a, b) => a - b);
  for (let i = 1; i < times.length; i++)
    expect(times[i]! - times[i - 1]!, `request ${i} after ${i - 1}`).toBeGreaterThanOrEqual(intervalMs / 2);
}

describe('the check cannot be aimed', () => {
  it('POST, PUT and DELETE declared with a body and a query: svc sends GET without either; a route answering only its method gets it without a body; no redirect is followed', async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: '1' });
    // An API that answers GET (as a REST resource does) and would act on the others.
    const api1 = await startOrigin('127.0.0.3', (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    );
    // A route that answers only POST (404 to anything else, as a stock paid route of one method does).
    const postOnly = await startOrigin('127.0.0.4', (req, res) => res.writeHead(req.method === 'POST' ? 200 : 404).end());
    // Same-origin temporary redirects (a body would be re-sent on each hop).
    const redirecting = await startOrigin('127.0.0.5', (req, res) => res.writeHead(307, { location: `${req.url}x` }).end());
    cleanups.push(api1.close, postOnly.close, redirecting.close);

    const transfer = { cmd: 'transfer', to: 'attacker', amount: 1_000_000 };
    expect(await settle(svc, `${api1.base}/api/transfer`, SQUATTER, declaring('POST', transfer))).toEqual({ status: 'processing' });
    await settle(svc, `${api1.base}/users/42/role`, SQUATTER, declaring('PUT', { role: 'admin' }));
    await settle(svc, `${api1.base}/users/42`, SQUATTER, declaring('DELETE', { confirm: 'yes' }));
    await settle(svc, `${postOnly.base}/admin/transfer`, SQUATTER, declaring('POST', transfer));
    await settle(svc, `${redirecting.base}/pay`, SQUATTER, declaring('POST', transfer));

    // Each claim is asked until it is rejected (a first try and two retries, 5 s and 10 s later).
    await until(() => api1.seen.length >= 9 && postOnly.seen.length >= 3 && redirecting.seen.length >= 3, 40_000);
    expect(api1.seen.length).toBe(9);
    for (const request of [...api1.seen, ...redirecting.seen]) {
      expect(request.method).toBe('GET');
      expect(request.bodyBytes).toBe(0);
      expect(request.url).not.toContain('?');
    }
    expect(new Set(api1.seen.map((s) => s.url))).toEqual(new Set(['/api/transfer', '/users/42/role', '/users/42']));
    // The redirect target is never asked: every request is the listing's own path.
    expect(new Set(redirecting.seen.map((s) => s.url))).toEqual(new Set(['/pay']));
    // GET first; once the route answered it as one that does not exist, POST without a body (never the example).
    expect(postOnly.seen[0]).toMatchObject({ method: 'GET', bodyBytes: 0, url: '/admin/transfer' });
    expect(postOnly.seen.slice(1).every((s) => s.method === 'POST' && s.bodyBytes === 0 && s.url === '/admin/transfer')).toBe(true);
    for (const origin of [api1, postOnly, redirecting]) expectPaced(origin.seen, 1000);
  }, 60_000);

  it('a template escape is refused with bazaar_path_params_invalid; nothing is sent', async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: '1' });
    const victim = await startOrigin('127.0.0.6', (req, res) =>
      res.writeHead(402, { 'payment-required': paymentRequired(`http://127.0.0.6${req.url}`, SQUATTER) }).end('{}'),
    );
    cleanups.push(victim.close);
    await settle(svc, `${victim.base}/v/users/x/y/s`, SQUATTER, {
      ...declaring('GET', {}, { a: '..', b: '..', c: 's' }),
      routeTemplate: '/v/users/:a/:b/:c',
    });
    const checks = async () =>
      (await api(svc.url).post('/discovery/validate', { url: `${victim.base}/v/users/:a/:b/:c` })).body.ownership as Array<
        Record<string, string>
      >;
    await until(async () => (await checks()).some((c) => c.status === 'rejected'), 20_000);
    expect(await checks()).toMatchObject([{ payTo: SQUATTER, status: 'rejected', code: 'bazaar_path_params_invalid' }]);
    expect((await checks())[0]!.reason).toMatch(/pathParams.a is a dot segment/);
    // validate itself asked the template URL as given (once); the claim's check sent nothing.
    expect(victim.seen.filter((s) => s.url !== '/v/users/:a/:b/:c')).toEqual([]);
    const list = await api(svc.url).get(`/discovery/resources?payTo=${SQUATTER}`);
    expect(list.body.items).toEqual([]);
  }, 40_000);
});

/** An origin that passes each request on to the demo MCP seller at `target` and its answer back (it records, the seller answers). */
const forwardingTo =
  (target: string) =>
  async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers.set(name, value);
    try {
      const answer = await fetch(new URL(req.url ?? '/', target), {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const passed: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!['content-length', 'transfer-encoding', 'content-encoding', 'connection'].includes(name)) passed[name] = value;
      });
      res.writeHead(answer.status, passed).end(Buffer.from(await answer.arrayBuffer()));
    } catch {
      res.writeHead(502).end();
    }
  };

describe('a check sends only what identifies the resource: no caller query, no example arguments', () => {
  const transfer = { cmd: 'transfer', to: 'attacker', amount: 1_000_000 };

  it('validate of a URL carrying a query asks the URL a listing would have, without the query; the listing is that URL', async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: '1' });
    // A paid route whose 402 names the URL it was asked (as the stock middleware does) and declares a bazaar extension.
    const origin = await startOrigin('127.0.0.30', (req, res) =>
      res
        .writeHead(402, {
          'payment-required': encodeX402Header({
            x402Version: 2,
            resource: { url: `http://${req.headers.host}${req.url}` },
            accepts: [{ scheme: 'exact', network: 'stellar:testnet', amount: '1000', asset: ASSET, payTo: HONEST, maxTimeoutSeconds: 60 }],
            extensions: { bazaar: declaring('POST', transfer) },
          }),
        })
        .end('{}'),
    );
    cleanups.push(origin.close);
    const asked = `${origin.base}/p%61y/?cmd=transfer&to=attacker&amount=1000000#confirm`;
    const answer = await api(svc.url).post('/discovery/validate', { url: asked, method: 'POST' });
    expect(answer.status).toBe(200);
    expect(origin.seen.map(({ method, url, bodyBytes }) => ({ method, url, bodyBytes }))).toEqual([
      { method: 'GET', url: '/pay', bodyBytes: 0 },
    ]);
    // What was asked is what a settlement would list (the catalog's canonical URL: origin and path).
    expect(answer.body).toMatchObject({ wouldList: true, problems: [], listing: { resource: `${origin.base}/pay` } });
    expect(JSON.stringify(answer.body.checks)).not.toContain('attacker');
  }, 30_000);

  it("an MCP tool's check (claim and validate) calls the tool with neutral arguments (none required: {}), never its example; the demo seller still names its payTo", async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: '1' });
    const accepts = [
      {
        scheme: 'exact',
        network: 'stellar:testnet',
        asset: ASSET,
        amount: '1000',
        payTo: HONEST,
        maxTimeoutSeconds: 60,
        extra: { areFeesSponsored: true },
      },
    ];
    const calls: Array<Record<string, unknown>> = [];
    const tool = {
      name: 'transfer',
      description: 'Moves funds (a tool that would act on its arguments)',
      inputSchema: { type: 'object' as const, properties: { cmd: { type: 'string' }, to: { type: 'string' }, amount: { type: 'number' } } },
      example: transfer,
      accepts,
      handler: (args: Record<string, unknown>) => (calls.push(args), { content: [{ type: 'text' as const, text: 'moved' }] }),
    };
    const seller = await startPaidMcpServer({ facilitator: createFacilitatorClient(svc.url), tools: [tool] });
    const origin = await startOrigin('127.0.0.31', forwardingTo(seller.url));
    cleanups.push(origin.close, () => seller.close());
    const endpoint = `${origin.base}/mcp`;

    // A settlement for the tool, its bazaar declaring the example: a claim svc checks at the tool's server.
    const claim = await api(svc.url).post('/settle', {
      x402Version: 2,
      ...settlement({
        url: endpoint,
        payTo: HONEST,
        bazaar: mcpBazaar({ toolName: 'transfer', inputSchema: tool.inputSchema, example: transfer }),
      }),
    });
    expect(claim.status).toBe(200);
    await until(async () => ((await api(svc.url).get(`/discovery/resources?payTo=${HONEST}`)).body.items as unknown[]).length > 0, 20_000);
    expect((await api(svc.url).get(`/discovery/resources?payTo=${HONEST}`)).body.items).toMatchObject([
      { resource: endpoint, type: 'mcp' },
    ]);

    // validate at the host's next slot, its URL carrying a query.
    await new Promise((r) => setTimeout(r, 1_100));
    const validated = await api(svc.url).post('/discovery/validate', { url: `${endpoint}?to=attacker`, toolName: 'transfer' });
    expect(validated.body.checks).toContainEqual(expect.objectContaining({ name: 'payment_required', ok: true }));

    const toolCalls = origin.seen
      .map((s) => (s.body === '' ? undefined : (JSON.parse(s.body) as { method?: string; params?: Record<string, unknown> })))
      .filter((m) => m?.method === 'tools/call');
    expect(toolCalls.length).toBe(2); // the claim's check and validate's
    for (const call of toolCalls) {
      expect(call!.params!.name).toBe('transfer');
      expect(call!.params!.arguments).toEqual({}); // its schema requires nothing
    }
    for (const request of origin.seen) {
      expect(request.url).toBe('/mcp');
      expect(request.body).not.toContain('attacker');
    }
    expect(calls).toEqual([]); // the tool never ran
  }, 40_000);

  /**
   * A stock seller: the MCP SDK's McpServer validating each call's arguments against the tool's
   * inputSchema, then the tool's x402 payment wrapper answering an unpaid call with its
   * PaymentRequired (tool-result binding) before the tool runs; behind a recording origin.
   */
  async function stockSeller(host: string, inputSchema: Record<string, unknown>) {
    const reached: unknown[] = [];
    const accepts = [{ scheme: 'exact', network: 'stellar:testnet', asset: ASSET, amount: '1000', payTo: HONEST, maxTimeoutSeconds: 60 }];
    const handler = createMcpHandler(
      () => {
        const server = new McpServer({ name: 'stock-seller', version: '0.1.0' });
        // Every call here is unpaid: the wrapper answers it with the PaymentRequired, the tool never runs.
        server.registerTool('transfer', { description: 'Moves funds', inputSchema: fromJsonSchema(inputSchema) }, (args: unknown) => {
          reached.push(args);
          const required = { x402Version: 2, resource: { url: 'mcp://tool/transfer' }, accepts };
          return { isError: true, structuredContent: required, content: [{ type: 'text' as const, text: JSON.stringify(required) }] };
        });
        return server;
      },
      { legacy: 'stateless' },
    );
    const origin = await startOrigin(host, async (req, res, body) => {
      const answer = await handler.fetch(
        new Request(`http://${req.headers.host}${req.url}`, {
          method: req.method ?? 'GET',
          headers: Object.entries(req.headers).flatMap(([name, value]) =>
            typeof value === 'string' ? [[name, value] as [string, string]] : [],
          ),
          ...(body.length > 0 ? { body } : {}),
        }),
      );
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => (headers[name] = value));
      res.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
    });
    cleanups.push(origin.close);
    const toolCalls = () =>
      origin.seen
        .filter((s) => s.body.includes('"tools/call"'))
        .map((s) => (JSON.parse(s.body) as { params: { name: string; arguments: unknown } }).params)
        .map(({ name, arguments: args }) => ({ name, arguments: args }));
    return { origin, endpoint: `${origin.base}/mcp`, reached, toolCalls };
  }

  it("a stock McpServer seller whose tool requires arguments is listed: svc's own neutral values pass its validation, none of the listing's", async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: '1' });
    const chosen = 'attacker-transfer';
    // The server's own schema, with values a check must never send (example, default, enum, const).
    const served = {
      type: 'object',
      properties: {
        to: { type: 'string', minLength: 1, default: chosen, examples: [chosen] },
        amount: { type: 'number', minimum: 0, examples: [777777] },
        memo: { type: 'object', properties: { note: { type: 'string' }, via: { type: 'string', enum: [chosen] } }, required: ['note'] },
        mode: { type: 'string', enum: [chosen], default: chosen },
      },
      required: ['to', 'amount', 'memo'],
    };
    const seller = await stockSeller('127.0.0.32', served);
    // The settlement's bazaar declares the attacker's example and a schema of its own choosing.
    const declared = {
      type: 'object',
      properties: { cmd: { type: 'string', const: chosen }, to: { type: 'string', enum: [chosen], default: chosen } },
      required: ['cmd', 'to'],
    };
    const claim = await api(svc.url).post('/settle', {
      x402Version: 2,
      ...settlement({
        url: seller.endpoint,
        payTo: HONEST,
        bazaar: mcpBazaar({ toolName: 'transfer', inputSchema: declared, example: { cmd: chosen, to: chosen, amount: 777777 } }),
      }),
    });
    expect(claim.status).toBe(200);
    await until(async () => ((await api(svc.url).get(`/discovery/resources?payTo=${HONEST}`)).body.items as unknown[]).length > 0, 20_000);
    expect((await api(svc.url).get(`/discovery/resources?payTo=${HONEST}`)).body.items).toMatchObject([
      { resource: seller.endpoint, type: 'mcp' },
    ]);

    await new Promise((r) => setTimeout(r, 1_100)); // the host's next slot
    const validated = await api(svc.url).post('/discovery/validate', { url: seller.endpoint, toolName: 'transfer' });
    expect(validated.body.checks).toContainEqual(expect.objectContaining({ name: 'payment_required', ok: true }));

    const neutral = { to: 'x', amount: 0, memo: { note: '' } };
    expect(seller.toolCalls()).toEqual([
      { name: 'transfer', arguments: neutral },
      { name: 'transfer', arguments: neutral },
    ]);
    expect(seller.reached).toEqual([neutral, neutral]); // past the SDK's validation, to the payment wrapper
    for (const request of seller.origin.seen) {
      expect(request.url).toBe('/mcp');
      expect(request.body).not.toContain(chosen);
      expect(request.body).not.toContain('777777');
    }
  }, 40_000);

  it('a tool whose required argument only an enum value satisfies gets an input error, and the reason names the fix', async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: '1' });
    const seller = await stockSeller('127.0.0.33', {
      type: 'object',
      properties: { action: { type: 'string', enum: ['attacker-transfer', 'read'] } },
      required: ['action'],
    });
    const validated = await api(svc.url).post('/discovery/validate', { url: seller.endpoint, toolName: 'transfer' });
    expect(validated.body.problems).toEqual([
      {
        code: 'svc_validate_payment_required_invalid',
        reason: expect.stringMatching(/Input validation error.*svc's own neutral arguments.*before it validates/s),
      },
    ]);
    expect(seller.toolCalls()).toEqual([{ name: 'transfer', arguments: { action: '' } }]);
    expect(seller.reached).toEqual([]); // the SDK refused the arguments before the payment wrapper
  }, 30_000);
});

describe('one request per host per interval, whatever the paths, payTos and instances', () => {
  const INTERVAL_S = 2;
  const WINDOW_MS = 9_000;

  async function flood(instances: TestServer[], host: string) {
    // A server error: every claim is asked again twice, so there is always a claim due for the host.
    const victim = await startOrigin(host, (_req, res) => res.writeHead(500).end());
    cleanups.push(victim.close);
    const started = Date.now();
    let i = 0;
    for (const payTo of [SQUATTER, OTHER])
      for (let path = 0; path < 20; path++)
        await settle(instances[i++ % instances.length]!, `${victim.base}/p${path}`, payTo, declaring('POST', { n: path }));
    const validated: string[] = [];
    for (let v = 0; v < 3; v++) {
      const answer = await api(instances[v % instances.length]!.url).post('/discovery/validate', { url: `${victim.base}/p0` });
      validated.push(...(answer.body.problems as Array<{ code: string }>).map((p) => p.code));
    }
    await new Promise((r) => setTimeout(r, WINDOW_MS - (Date.now() - started)));
    const within = victim.seen.filter((s) => s.at - started <= WINDOW_MS);
    expect(within.length).toBeGreaterThanOrEqual(2); // the checks go on
    expect(within.length).toBeLessThanOrEqual(Math.floor(WINDOW_MS / (INTERVAL_S * 1000)) + 1);
    expectPaced(within, INTERVAL_S * 1000);
    expect(validated).toContain('svc_validate_origin_paced');
    if (process.env.OUTBOUND_MEASURE)
      console.log(
        `MEASURE ${host}: ${within.length} requests in ${WINDOW_MS} ms, gaps ${within
          .slice(1)
          .map((s, i) => s.at - within[i]!.at)
          .join(',')}`,
      );
    return within.length;
  }

  it('20 paths × 2 payTos and validate on one host (SQLite)', async () => {
    const svc = await startSvc({ PROBE_HOST_INTERVAL_SECONDS: String(INTERVAL_S) });
    await flood([svc], '127.0.0.7');
  }, 60_000);

  it('the same through two instances sharing one Postgres catalog', async () => {
    const databaseUrl = await freshCatalogDatabase();
    const env = { PROBE_HOST_INTERVAL_SECONDS: String(INTERVAL_S), DATABASE_URL: databaseUrl };
    const a = await startSvc(env);
    const b = await startSvc(env);
    await flood([a, b], '127.0.0.8');
  }, 60_000);
});

describe('fair checking', () => {
  it('an honest claim is listed within 5 s beside 120 claims of one payTo whose origins never answer', async () => {
    const svc = await startSvc({});
    const hanging: Origin[] = [];
    for (let h = 0; h < 12; h++) hanging.push(await startOrigin(`127.0.0.${10 + h}`, () => 'hang'));
    const honest = await startOrigin('127.0.0.2', (req, res) =>
      res.writeHead(402, { 'payment-required': paymentRequired(`http://127.0.0.2${req.url}`, HONEST) }).end('{}'),
    );
    cleanups.push(honest.close, ...hanging.map((o) => o.close));
    for (let n = 0; n < 120; n++) await settle(svc, `${hanging[n % 12]!.base}/slow/${n}`, SQUATTER, declaring('GET', {}));
    const settled = Date.now();
    expect(await settle(svc, `${honest.base}/weather`, HONEST, declaring('GET', { city: 'Oslo' }))).toEqual({ status: 'processing' });
    let listedAfter = Infinity;
    await until(async () => {
      const items = (await api(svc.url).get(`/discovery/resources?payTo=${HONEST}`)).body.items as unknown[];
      if (items.length > 0) listedAfter = Date.now() - settled;
      return items.length > 0;
    }, 15_000);
    expect(listedAfter).toBeLessThan(5_000);
    // One request per host: the 12 hanging hosts were asked once each at most.
    for (const origin of hanging) expect(origin.seen.length).toBeLessThanOrEqual(1);
  }, 60_000);
});
