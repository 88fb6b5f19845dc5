/**
 * The demo sellers of `npm run dev`: paid HTTP resources that declare `bazaar` discovery
 * extensions, so the first settlement through svc lists them in the catalog.
 *
 * - GET  /weather?city=…&units=…   (query parameters)
 * - POST /summarize {text, maxWords} (JSON body)
 *
 * They run on the stock x402 seller (src/dev/stock-seller.ts), which is also what proves svc
 * works with unmodified upstream resource servers.
 */
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { startStockSeller, type SellerSettlement, type StockSeller } from './stock-seller.ts';

/** Prices in USDC base units (7 decimals): 0.001 and 0.0025 USDC. */
export const WEATHER_PRICE = '10000';
export const SUMMARIZE_PRICE = '25000';

export interface DemoSellerOptions {
  facilitatorUrl: string;
  payTo: string;
  /** The USDC contract on the devnet. */
  asset: string;
  port?: number;
  onVerify?: (route: string, result: { isValid: boolean; invalidReason?: string; payer?: string }) => void;
  onSettle?: (settlement: SellerSettlement) => void;
}

const CITIES: Record<string, { tempC: number; sky: string }> = {
  lisbon: { tempC: 21, sky: 'sunny' },
  oslo: { tempC: 4, sky: 'overcast' },
  nairobi: { tempC: 24, sky: 'light rain' },
};

function weather(query: Record<string, string>) {
  const city = (query.city ?? 'Lisbon').slice(0, 64);
  const known = CITIES[city.toLowerCase()] ?? { tempC: 15, sky: 'clear' };
  const fahrenheit = query.units === 'imperial';
  return { city, sky: known.sky, temperature: fahrenheit ? Math.round(known.tempC * 1.8 + 32) : known.tempC, units: fahrenheit ? 'imperial' : 'metric' };
}

function summarize(body: unknown) {
  const input = (typeof body === 'object' && body !== null ? body : {}) as { text?: unknown; maxWords?: unknown };
  const text = typeof input.text === 'string' ? input.text : '';
  const maxWords = Number.isInteger(input.maxWords) && (input.maxWords as number) > 0 ? Math.min(input.maxWords as number, 200) : 12;
  const words = text.split(/\s+/).filter(Boolean);
  return { summary: words.slice(0, maxWords).join(' ') + (words.length > maxWords ? ' …' : ''), words: words.length };
}

export function startDemoSellers(options: DemoSellerOptions): Promise<StockSeller> {
  const accepts = (amount: string) => ({
    scheme: 'exact',
    network: 'stellar:testnet' as const,
    payTo: options.payTo,
    price: { amount, asset: options.asset },
    maxTimeoutSeconds: 60,
  });
  return startStockSeller({
    facilitatorUrl: options.facilitatorUrl,
    port: options.port,
    onVerify: options.onVerify,
    onSettle: options.onSettle,
    routes: {
      'GET /weather': {
        accepts: accepts(WEATHER_PRICE),
        description: 'Current weather for a city: sky and temperature, metric or imperial.',
        mimeType: 'application/json',
        serviceName: 'Demo Weather',
        tags: ['weather', 'forecast', 'demo'],
        extensions: declareDiscoveryExtension({
          input: { city: 'Lisbon', units: 'metric' },
          inputSchema: {
            type: 'object',
            properties: {
              city: { type: 'string', description: 'City name, e.g. Lisbon' },
              units: { type: 'string', enum: ['metric', 'imperial'], description: 'Temperature units' },
            },
            required: ['city'],
          },
          output: { example: { city: 'Lisbon', sky: 'sunny', temperature: 21, units: 'metric' } },
        }),
      },
      'POST /summarize': {
        accepts: accepts(SUMMARIZE_PRICE),
        description: 'Summarize a text to its first words (a stand-in for a paid AI endpoint).',
        mimeType: 'application/json',
        serviceName: 'Demo Summarizer',
        tags: ['text', 'summary', 'demo'],
        extensions: declareDiscoveryExtension({
          bodyType: 'json',
          input: { text: 'x402 lets any HTTP resource ask for a payment and get paid in one round trip.', maxWords: 8 },
          inputSchema: {
            type: 'object',
            properties: {
              text: { type: 'string', description: 'The text to summarize' },
              maxWords: { type: 'integer', minimum: 1, maximum: 200, description: 'Longest summary, in words' },
            },
            required: ['text'],
          },
          output: { example: { summary: 'x402 lets any HTTP resource ask for a payment …', words: 16 } },
        }),
      },
    },
    handlers: {
      'GET /weather': ({ query }) => weather(query),
      'POST /summarize': ({ body }) => summarize(body),
    },
  });
}
