/**
 * The buyer's story `npm run dev` tells: ask a paid resource, read the 402 terms, sign the
 * payment with svc's own buyer builder (src/client), pay, and follow the money — the seller's
 * verify and settle through svc, the on-chain transaction, the seller's response, the listing
 * appearing in svc's catalog and a search that finds it. Each step checks what it prints, so a
 * story that "completes" really happened; the result is returned for `--once` and the test.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
  type PaymentRequired,
} from '../client/seller.ts';
import { createSdkRpc, createStellarPayment, keypairFromSeed, type ChainRpc, type Keypair } from '../chains/stellar/index.ts';
import type { PaymentRequirements } from '../scheme/types.ts';
import type { AgentResult } from './agent.ts';
import type { SellerEvent } from './sellers.ts';
import type { Stack } from './stack.ts';
import { expectThat, type Trace } from './trace.ts';

/** How long the story waits for its paid resources to be listed (their origins checked: seconds). */
const LISTING_WAIT_MS = 15_000;

export interface PaidCall {
  url: string;
  status: number;
  body: unknown;
  transaction: string;
  payer: string;
  amount: string;
  ledger?: number;
}

export interface StoryResult {
  ok: boolean;
  payments: PaidCall[];
  listed: string[];
  searchHits: string[];
  /** What search_resources found at svc's hosted POST /mcp for the same query, in order. */
  hostedHits?: string[];
  agent?: AgentResult;
  error?: string;
}

const decodeHeader = <T>(value: string | null): T | undefined => decodeX402Header(value) as T | undefined;
const usdc = (baseUnits: string | bigint) => `${(Number(baseUnits) / 1e7).toFixed(7).replace(/0+$/, '').replace(/\.$/, '')} USDC`;

/** An MCP client added by URL (svc's hosted POST /mcp): its tool list and the resources one search finds. */
async function hostedSearch(url: string, query: string): Promise<{ tools: string[]; hits: string[] }> {
  const client = new Client({ name: 'svc-dev-story', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const { tools } = await client.listTools();
    const found = (await client.callTool({ name: 'search_resources', arguments: { query } })) as {
      isError?: boolean;
      structuredContent?: { hits?: Array<{ resource: string }> };
    };
    expectThat(!found.isError, `search_resources at ${url} failed: ${JSON.stringify(found.structuredContent)}`);
    return { tools: tools.map((t) => t.name), hits: (found.structuredContent?.hits ?? []).map((h) => h.resource) };
  } finally {
    await client.close();
  }
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  expectThat(res.ok, `GET ${url} answered ${res.status}`);
  return (await res.json()) as T;
}

/** One paid HTTP call, traced end to end. */
async function payHttp(
  trace: Trace,
  stack: Stack,
  events: SellerEvent[],
  rpc: ChainRpc,
  buyer: Keypair,
  request: { url: string; method: 'GET' | 'POST'; body?: unknown },
): Promise<PaidCall> {
  const init = (headers: Record<string, string> = {}): RequestInit => ({
    method: request.method,
    headers: { ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });

  trace.step(`Buyer calls ${request.method} ${request.url} without paying`);
  const first = await fetch(request.url, init());
  expectThat(first.status === 402, `expected 402 Payment Required, got ${first.status}`);
  const required = decodeHeader<PaymentRequired>(first.headers.get(PAYMENT_REQUIRED_HEADER));
  expectThat(required, 'the 402 has no PAYMENT-REQUIRED header');
  const terms = required.accepts.find((a) => a.scheme === 'exact' && a.network === stack.config.network);
  expectThat(terms, `no exact/${stack.config.network} terms among ${required.accepts.length} offered`);
  trace.detail('402 Payment Required, terms (PAYMENT-REQUIRED header)');
  trace.detail('  scheme / network', `${terms.scheme} on ${terms.network}`);
  trace.detail('  amount', `${terms.amount} base units = ${usdc(terms.amount)}`);
  trace.detail('  asset (USDC SAC)', terms.asset);
  trace.detail('  payTo', terms.payTo);
  trace.detail('  maxTimeoutSeconds', terms.maxTimeoutSeconds);
  trace.detail('  extra', terms.extra);
  trace.detail('  bazaar extension declared', required.extensions?.bazaar ? 'yes (the settlement will list it in the catalog)' : 'no');

  trace.step('Buyer signs a Soroban authorization for exactly transfer(buyer → seller, amount)');
  const payload = await createStellarPayment({
    requirements: terms,
    signer: buyer,
    rpc,
    resource: required.resource,
    extensions: required.extensions,
  });
  trace.detail('payer', buyer.publicKey());
  trace.detail(
    'payload',
    `x402Version ${payload.x402Version}, unsigned envelope with one signed auth entry (${String((payload.payload as { transaction: string }).transaction).length} chars of XDR); fees are sponsored by svc`,
  );

  trace.step('Buyer retries with PAYMENT-SIGNATURE; the seller verifies and settles through svc');
  const seen = events.length;
  const balancesBefore = {
    buyer: stack.devnet.balances(buyer.publicKey()).usdc ?? 0n,
    seller: stack.devnet.balances(terms.payTo).usdc ?? 0n,
  };
  const paid = await fetch(request.url, init({ [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(payload) }));
  const body = await paid.json().catch(() => undefined);
  const mine = events.slice(seen);
  const verify = mine.find((e) => e.kind === 'verify');
  expectThat(verify, 'the seller never called svc /verify');
  trace.detail(`seller → svc POST /verify`, verify.ok ? `isValid: true, payer ${verify.payer}` : `isValid: false, ${verify.code}`);
  expectThat(verify.ok, `svc refused the payment: ${verify.code}`);
  const settle = mine.find((e) => e.kind === 'settle');
  expectThat(settle?.transaction, 'the seller never called svc /settle');
  trace.detail(`seller → svc POST /settle`, settle.ok ? `success: true` : `success: false, ${settle.code}`);
  expectThat(settle.ok, `settlement failed: ${settle.code}`);
  trace.detail('  on-chain transaction', settle.transaction);
  trace.detail('  EXTENSION-RESPONSES (to the seller only)', settle.extensionResponses ?? 'none');

  const onChain = await rpc.getTransaction(settle.transaction);
  expectThat(onChain.status === 'SUCCESS', `transaction ${settle.transaction} is ${onChain.status} on chain`);
  const moved = {
    buyer: (stack.devnet.balances(buyer.publicKey()).usdc ?? 0n) - balancesBefore.buyer,
    seller: (stack.devnet.balances(terms.payTo).usdc ?? 0n) - balancesBefore.seller,
  };
  trace.detail(
    '  devnet getTransaction',
    `SUCCESS in ledger ${onChain.ledger ?? '?'}; fee ${onChain.feeCharged ?? '?'} stroops paid by svc's fee-bump account`,
  );
  trace.detail('  balances', `buyer ${moved.buyer}, seller +${moved.seller} base units (svc's accounts hold no USDC)`);
  expectThat(
    moved.seller === BigInt(terms.amount) && moved.buyer === -BigInt(terms.amount),
    'the balances did not move by exactly the price',
  );

  trace.step('Buyer receives the resource and the receipt');
  expectThat(paid.status === 200, `expected 200 after paying, got ${paid.status}`);
  const receipt = decodeHeader<{ success: boolean; transaction: string; network: string; payer: string }>(
    paid.headers.get(PAYMENT_RESPONSE_HEADER),
  );
  expectThat(receipt?.success && receipt.transaction === settle.transaction, 'the PAYMENT-RESPONSE receipt does not match the settlement');
  trace.detail('HTTP 200 body', body);
  trace.detail('PAYMENT-RESPONSE receipt', { transaction: receipt.transaction, network: receipt.network, payer: receipt.payer });
  trace.ok(`paid ${usdc(terms.amount)} for ${request.method} ${new URL(request.url).pathname}`);
  return {
    url: request.url,
    status: paid.status,
    body,
    transaction: settle.transaction,
    payer: receipt.payer,
    amount: terms.amount,
    ledger: onChain.ledger,
  };
}

export interface StoryOptions {
  trace: Trace;
  stack: Stack;
  events: SellerEvent[];
  sellerUrl: string;
  /** The agent part (MCP), run after the HTTP story when given. */
  agent?: (trace: Trace, rpc: ChainRpc) => Promise<AgentResult>;
}

export async function runStory({ trace, stack, events, sellerUrl, agent }: StoryOptions): Promise<StoryResult> {
  const result: StoryResult = { ok: false, payments: [], listed: [], searchHits: [] };
  const rpc = createSdkRpc({ url: stack.devnet.rpcUrl });
  const buyer = keypairFromSeed(stack.accounts.buyer.secret)!;
  try {
    result.payments.push(
      await payHttp(trace, stack, events, rpc, buyer, { url: `${sellerUrl}/weather?city=Lisbon&units=metric`, method: 'GET' }),
    );
    result.payments.push(
      await payHttp(trace, stack, events, rpc, buyer, {
        url: `${sellerUrl}/summarize`,
        method: 'POST',
        body: {
          text: 'svc verifies and settles x402 payments on Stellar, sponsors the fees, and lists every paid resource it settles in a searchable catalog.',
          maxWords: 9,
        },
      }),
    );

    trace.step(`The listings appear in svc's catalog: GET ${stack.svc.url}/discovery/resources`);
    type Listed = {
      items: Array<{ resource: string; type: string; description?: string; accepts: PaymentRequirements[]; lastUpdated: string }>;
      pagination: { total: number };
    };
    // A new listing waits for svc to ask the seller's own server whether it names the payTo that
    // was paid (the settle answered `processing`; docs/CATALOG.md "Ownership and refresh"): seconds.
    const expected = result.payments.map((p) => p.url.split('?')[0]!);
    let list = await getJson<Listed>(`${stack.svc.url}/discovery/resources`);
    for (let waited = 0; waited < LISTING_WAIT_MS && !expected.every((u) => list.items.some((i) => i.resource === u)); waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      list = await getJson<Listed>(`${stack.svc.url}/discovery/resources`);
    }
    for (const item of list.items)
      trace.detail(
        `${item.type} ${item.resource}`,
        `${usdc(item.accepts[0]?.amount ?? '0')}, "${item.description ?? ''}", updated ${item.lastUpdated}`,
      );
    result.listed = list.items.map((i) => i.resource);
    for (const p of result.payments) {
      const canonical = p.url.split('?')[0]!;
      expectThat(result.listed.includes(canonical), `${canonical} is not listed after its settlement`);
    }
    trace.ok(`${list.pagination.total} listings, each created by a settlement (there is no registration endpoint)`);

    const query = 'weather forecast for a city';
    trace.step(`A search finds it: GET ${stack.svc.url}/discovery/search?query=${encodeURIComponent(query)}`);
    const found = await getJson<{ resources: Array<{ resource: string; description?: string }> }>(
      `${stack.svc.url}/discovery/search?query=${encodeURIComponent(query)}`,
    );
    found.resources.forEach((r, i) => trace.detail(`#${i + 1}`, `${r.resource}  "${r.description ?? ''}"`));
    result.searchHits = found.resources.map((r) => r.resource);
    expectThat(result.searchHits[0] === `${sellerUrl}/weather`, `the weather resource is not the top hit for "${query}"`);
    trace.ok('the weather resource ranks first');

    if (agent) result.agent = await agent(trace, rpc);

    trace.step(`The same listings, for people: the catalog explorer at ${stack.svc.url}/`);
    const explorer = await fetch(`${stack.svc.url}/`);
    await explorer.arrayBuffer();
    expectThat(
      explorer.ok && (explorer.headers.get('content-type') ?? '').startsWith('text/html'),
      'the catalog explorer page is not served',
    );
    trace.ok(`open ${stack.svc.url}/ in a browser: search, filters, and each listing's price, calling convention and snippets`);

    const mcpUrl = `${stack.svc.url}/mcp`;
    trace.step(`For agents that install nothing: an MCP client adds svc by URL, ${mcpUrl} (streamable HTTP)`);
    const hosted = await hostedSearch(mcpUrl, query);
    trace.detail('tools/list', hosted.tools.join(', '));
    result.hostedHits = hosted.hits;
    expectThat(hosted.tools.join(',') === 'search_resources', `the hosted MCP tools are ${hosted.tools.join(', ')}`);
    expectThat(
      hosted.hits.join('\n') === result.searchHits.join('\n'),
      `search_resources over MCP found ${hosted.hits.join(', ')}, GET /discovery/search ${result.searchHits.join(', ')}`,
    );
    trace.ok(`search_resources at ${mcpUrl} finds what GET /discovery/search finds (paying stays with the local tool server)`);
    result.ok = result.agent ? result.agent.ok : true;
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    trace.fail(result.error);
  }
  return result;
}
