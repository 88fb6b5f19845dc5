/**
 * The demo sellers of `npm run dev`, built with svc's seller toolkit (src/client): paid HTTP
 * resources and a paid MCP tool, each declaring a `bazaar` discovery extension, so the first
 * settlement through svc lists it in the catalog.
 *
 * - GET  {http}/weather?city=…&units=…    (query parameters)
 * - POST {http}/summarize {text, maxWords} (JSON body)
 * - MCP  {mcp} tool `exchange_rate`         (x402 MCP transport over streamable HTTP)
 *
 * The facilitator client handed to the toolkit is wrapped so the demo can show each verify and
 * settle the sellers make (the buyer never sees them).
 */
import type { FacilitatorClient } from '../client/facilitator.ts';
import { startPaidHttpServer, type PaidHttpServer } from '../client/seller-http.ts';
import { startPaidMcpServer, type PaidMcpServer } from '../client/seller-mcp.ts';
import type { PaymentRequirements } from '../scheme/types.ts';

/** Prices in USDC base units (7 decimals): 0.001, 0.0025 and 0.002 USDC. */
export const PRICES = { weather: '10000', summarize: '25000', exchangeRate: '20000' } as const;
export const MCP_TOOL = 'exchange_rate';

/** One verify or settle a seller made through svc, as the demo shows it. */
export interface SellerEvent {
  kind: 'verify' | 'settle';
  resource: string;
  ok: boolean;
  code?: string;
  payer?: string;
  transaction?: string;
  extensionResponses?: Record<string, unknown>;
}

/** The facilitator client with every verify / settle reported to `record` (decorator). */
export function observedFacilitator(inner: FacilitatorClient, record: (event: SellerEvent) => void): FacilitatorClient {
  const resourceOf = (payload: unknown) => {
    const url = (payload as { resource?: { url?: unknown } } | undefined)?.resource?.url;
    return typeof url === 'string' ? url : '';
  };
  return {
    url: inner.url,
    supported: () => inner.supported(),
    list: (query) => inner.list(query),
    search: (query) => inner.search(query),
    delistText: (query) => inner.delistText(query),
    delist: (request) => inner.delist(request),
    async verify(payload, requirements) {
      const answer = await inner.verify(payload, requirements);
      record({
        kind: 'verify',
        resource: resourceOf(payload),
        ok: answer.body.isValid,
        code: answer.body.invalidReason ?? undefined,
        payer: answer.body.payer ?? undefined,
      });
      return answer;
    },
    async settle(payload, requirements) {
      const answer = await inner.settle(payload, requirements);
      record({
        kind: 'settle',
        resource: resourceOf(payload),
        ok: answer.body.success,
        code: answer.body.errorReason ?? undefined,
        payer: answer.body.payer ?? undefined,
        transaction: answer.body.transaction,
        extensionResponses: answer.extensionResponses,
      });
      return answer;
    },
  };
}

export interface DemoSellers {
  http: PaidHttpServer;
  mcp: PaidMcpServer;
  close(): Promise<void>;
}

const CITIES: Record<string, { tempC: number; sky: string }> = {
  lisbon: { tempC: 21, sky: 'sunny' },
  oslo: { tempC: 4, sky: 'overcast' },
  nairobi: { tempC: 24, sky: 'light rain' },
};

/** Demo rates against USD (fixed: this is a demo, not a price feed). */
const USD_RATES: Record<string, number> = { USD: 1, EUR: 0.92, GBP: 0.79, JPY: 151.3, XLM: 8.4 };

export async function startDemoSellers(options: {
  facilitator: FacilitatorClient;
  payTo: string;
  /** The USDC contract on the devnet. */
  asset: string;
  network: string;
  httpPort?: number;
  mcpPort?: number;
}): Promise<DemoSellers> {
  const accepts = (amount: string): PaymentRequirements[] => [
    {
      scheme: 'exact',
      network: options.network,
      asset: options.asset,
      amount,
      payTo: options.payTo,
      maxTimeoutSeconds: 60,
      extra: { areFeesSponsored: true },
    },
  ];
  const http = await startPaidHttpServer({
    facilitator: options.facilitator,
    port: options.httpPort,
    routes: [
      {
        method: 'GET',
        path: '/weather',
        accepts: accepts(PRICES.weather),
        description: 'Current weather for a city: sky and temperature, metric or imperial.',
        serviceName: 'Demo Weather',
        tags: ['weather', 'forecast', 'demo'],
        inputSchema: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'City name, e.g. Lisbon' },
            units: { type: 'string', enum: ['metric', 'imperial'], description: 'Temperature units' },
          },
          required: ['city'],
        },
        example: { city: 'Lisbon', units: 'metric' },
        handle: ({ query }) => {
          const city = query.get('city');
          if (!city) return { status: 400, body: { error: 'The query parameter city is required.' } };
          const known = CITIES[city.toLowerCase()] ?? { tempC: 15, sky: 'clear' };
          const imperial = query.get('units') === 'imperial';
          return {
            status: 200,
            body: {
              city: city.slice(0, 64),
              sky: known.sky,
              temperature: imperial ? Math.round(known.tempC * 1.8 + 32) : known.tempC,
              units: imperial ? 'imperial' : 'metric',
            },
          };
        },
      },
      {
        method: 'POST',
        path: '/summarize',
        accepts: accepts(PRICES.summarize),
        description: 'Summarize a text to its first words (a stand-in for a paid AI endpoint).',
        serviceName: 'Demo Summarizer',
        tags: ['text', 'summary', 'demo'],
        inputSchema: {
          type: 'object',
          properties: {
            text: { type: 'string', description: 'The text to summarize' },
            maxWords: { type: 'integer', minimum: 1, maximum: 200, description: 'Longest summary, in words' },
          },
          required: ['text'],
        },
        example: { text: 'x402 lets any HTTP resource ask for a payment and get paid in one round trip.', maxWords: 8 },
        handle: ({ body }) => {
          const input = (typeof body === 'object' && body !== null ? body : {}) as { text?: unknown; maxWords?: unknown };
          if (typeof input.text !== 'string') return { status: 400, body: { error: 'The body needs a text string.' } };
          const maxWords =
            Number.isInteger(input.maxWords) && (input.maxWords as number) > 0 ? Math.min(input.maxWords as number, 200) : 12;
          const words = input.text.split(/\s+/).filter(Boolean);
          return {
            status: 200,
            body: { summary: words.slice(0, maxWords).join(' ') + (words.length > maxWords ? ' …' : ''), words: words.length },
          };
        },
      },
    ],
  });
  let mcp: PaidMcpServer;
  try {
    mcp = await startPaidMcpServer({
      facilitator: options.facilitator,
      port: options.mcpPort,
      tools: [
        {
          name: MCP_TOOL,
          description: 'Convert an amount between currencies (USD, EUR, GBP, JPY, XLM) at demo exchange rates.',
          serviceName: 'Demo FX',
          tags: ['currency', 'exchange', 'demo'],
          inputSchema: {
            type: 'object',
            properties: {
              from: { type: 'string', enum: Object.keys(USD_RATES), description: 'Currency to convert from' },
              to: { type: 'string', enum: Object.keys(USD_RATES), description: 'Currency to convert to' },
              amount: { type: 'number', description: 'Amount in the from currency' },
            },
            required: ['from', 'to', 'amount'],
          },
          example: { from: 'EUR', to: 'USD', amount: 100 },
          accepts: accepts(PRICES.exchangeRate),
          handler: (args) => {
            const from = USD_RATES[String(args.from)];
            const to = USD_RATES[String(args.to)];
            const amount = Number(args.amount);
            if (!from || !to || !Number.isFinite(amount)) {
              return {
                isError: true,
                content: [{ type: 'text', text: `Unknown currency or amount; known: ${Object.keys(USD_RATES).join(', ')}.` }],
              };
            }
            const converted = Math.round((amount / from) * to * 100) / 100;
            return {
              content: [{ type: 'text', text: `${amount} ${String(args.from)} = ${converted} ${String(args.to)}` }],
              structuredContent: { from: args.from, to: args.to, amount, converted },
            };
          },
        },
      ],
    });
  } catch (err) {
    await http.close();
    throw err;
  }
  return {
    http,
    mcp,
    close: async () => {
      await Promise.all([http.close(), mcp.close()]);
    },
  };
}
