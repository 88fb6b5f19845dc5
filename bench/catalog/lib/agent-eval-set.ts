/**
 * A held-out evaluation of search for agents (docs/BENCHMARKS.md "Search for agents"): 48 listings
 * of realistic sellers with near neighbours (current / forecast / historical weather, FX rates /
 * conversion / history, OCR / PDF extraction / invoices, …) and three query sets with graded
 * relevance (0–3): `keyword` queries, `sentence`s as agents send them (10–40 words, politeness,
 * context, price or format constraints) and `intent` phrased without the listing's own words. The
 * set was written before the rank it measures was tuned, and the rank was not tuned to it.
 */
export interface EvalListing {
  key: string;
  serviceName: string;
  description: string;
  tags: readonly string[];
}

const L = (key: string, serviceName: string, description: string, tags: readonly string[]): EvalListing => ({
  key,
  serviceName,
  description,
  tags,
});

export const EVAL_LISTINGS: EvalListing[] = [
  L('w-current', 'Current Weather', 'current temperature, humidity and wind conditions for any city or coordinates', [
    'weather',
    'current',
  ]),
  L('w-forecast', 'Weather Forecast', 'hourly and 7-day weather forecasts for cities worldwide', ['weather', 'forecast']),
  L('w-history', 'Historical Weather', 'past weather observations and daily climate records back to 1950', [
    'weather',
    'history',
    'climate',
  ]),
  L('w-alerts', 'Severe Weather Alerts', 'storm, flood and heat warnings issued for a location', ['weather', 'alerts']),
  L('w-air', 'Air Quality Index', 'air pollution levels, PM2.5 and ozone readings by city', ['air', 'pollution']),
  L('w-marine', 'Marine Conditions', 'wave height, tide times and sea temperature for coastal spots', ['marine', 'tides']),
  L('fx-rates', 'FX Rates', 'latest foreign exchange rates for 170 currencies, updated every minute', ['currency', 'exchange', 'rates']),
  L('fx-convert', 'Currency Converter', 'convert an amount from one currency to another at the current rate', ['currency', 'conversion']),
  L('fx-history', 'Historical FX', 'daily exchange rate history for currency pairs since 1999', ['currency', 'history']),
  L('crypto-prices', 'Crypto Prices', 'real-time bitcoin, ethereum and altcoin prices in USD', ['crypto', 'prices']),
  L('crypto-wallet', 'Wallet Balance', 'token balances and transactions for an ethereum address', ['crypto', 'wallet', 'blockchain']),
  L('stocks', 'Stock Quotes', 'real-time stock quotes and intraday prices for US equities', ['stocks', 'finance']),
  L('ocr', 'Image OCR', 'extract printed and handwritten text from photos and scanned images', ['ocr', 'images', 'text']),
  L('pdf-extract', 'PDF Text Extractor', 'pull text, tables and metadata out of PDF documents', ['pdf', 'documents']),
  L('pdf-generate', 'HTML to PDF', 'render HTML pages or templates into PDF files', ['pdf', 'rendering']),
  L('invoice', 'Invoice Parser', 'read invoices and receipts into structured JSON: totals, dates, vendor', [
    'invoices',
    'receipts',
    'parsing',
  ]),
  L('summarize', 'Text Summarizer', 'condense long articles and documents into short summaries', ['text', 'summarization']),
  L('translate', 'Translation', 'translate text between 100 languages', ['translation', 'languages']),
  L('sentiment', 'Sentiment Analysis', 'score the positive or negative tone of reviews and social posts', ['nlp', 'sentiment']),
  L('grammar', 'Grammar Check', 'find spelling and grammar mistakes in English text', ['grammar', 'writing']),
  L('geocode', 'Geocoder', 'turn street addresses into latitude and longitude', ['maps', 'geocoding']),
  L('reverse-geo', 'Reverse Geocoder', 'turn coordinates into the nearest street address', ['maps', 'geocoding']),
  L('routing', 'Driving Directions', 'turn-by-turn routes, distance and travel time between places', ['maps', 'routing']),
  L('shipping', 'Shipping Rates', 'international shipping rate quotes from major carriers for a package', ['shipping', 'logistics']),
  L('tracking', 'Parcel Tracking', 'track deliveries by tracking number across carriers', ['tracking', 'logistics']),
  L('timezone', 'Time Zone Lookup', 'local time and UTC offset for a location', ['time', 'timezone']),
  L('img-gen', 'Image Generator', 'generate images from text prompts', ['images', 'ai']),
  L('img-upscale', 'Image Upscaler', 'upscale photos to higher resolution', ['images']),
  L('bg-remove', 'Background Remover', 'cut the subject out of a photo with a transparent background', ['images', 'editing']),
  L('tts', 'Text to Speech', 'turn text into natural sounding spoken audio', ['audio', 'voice']),
  L('stt', 'Speech to Text', 'transcribe audio recordings and voice notes into text', ['audio', 'transcription']),
  L('video-thumb', 'Video Thumbnails', 'grab frames from a video file as thumbnails', ['video']),
  L('scrape', 'Web Scraper', 'fetch a web page and return its readable content', ['web', 'scraping']),
  L('screenshot', 'Website Screenshot', 'capture a screenshot of any URL as PNG', ['web', 'images']),
  L('email-verify', 'Email Validator', 'check whether an email address exists and can receive mail', ['email', 'validation']),
  L('email-send', 'Transactional Email', 'send emails with templates and delivery tracking', ['email', 'messaging']),
  L('sms', 'SMS Gateway', 'send text messages to phone numbers in 200 countries', ['sms', 'messaging']),
  L('dns', 'DNS Lookup', 'resolve domain records: A, MX, TXT', ['dns', 'network']),
  L('whois', 'Domain Availability', 'check whether a domain name is registered and who owns it', ['domains']),
  L('ip-geo', 'IP Geolocation', 'country, city and ISP for an IP address', ['ip', 'geolocation']),
  L('news', 'News Headlines', 'top news stories by topic and country', ['news']),
  L('joke', 'Random Jokes', 'a random joke, optionally by category', ['fun', 'jokes']),
  L('recipes', 'Recipe Search', 'find recipes by ingredients and diet', ['food', 'recipes']),
  L('flights', 'Flight Status', 'live departure and arrival status for flights', ['travel', 'flights']),
  L('hotels', 'Hotel Prices', 'compare hotel room prices for given dates and city', ['travel', 'hotels']),
  L('company', 'Company Lookup', 'company registration details and officers by name or number', ['business', 'companies']),
  L('vat', 'VAT Number Check', 'validate an EU VAT number and return the registered business', ['tax', 'validation']),
  L('holidays', 'Public Holidays', 'public holidays for a country and year', ['calendar', 'holidays']),
];

export type EvalSet = 'keyword' | 'sentence' | 'intent';
export interface EvalQuery {
  set: EvalSet;
  query: string;
  /** Grades of the relevant listings (3 best); any other listing is 0, irrelevant. */
  grades: Record<string, number>;
}
const Q = (set: EvalSet, query: string, grades: Record<string, number>): EvalQuery => ({ set, query, grades });

export const EVAL_QUERIES: EvalQuery[] = [
  Q('keyword', 'weather forecast', { 'w-forecast': 3, 'w-current': 2, 'w-history': 1, 'w-alerts': 1, 'w-marine': 1 }),
  Q('keyword', 'exchange rates', { 'fx-rates': 3, 'fx-history': 2, 'fx-convert': 2 }),
  Q('keyword', 'pdf text', { 'pdf-extract': 3, 'pdf-generate': 1, ocr: 1 }),
  Q('keyword', 'geocoding', { geocode: 3, 'reverse-geo': 3 }),
  Q('keyword', 'crypto prices', { 'crypto-prices': 3, stocks: 1, 'crypto-wallet': 1 }),
  Q('keyword', 'ocr', { ocr: 3, invoice: 1 }),
  Q('keyword', 'speech to text', { stt: 3, tts: 1 }),
  Q('keyword', 'email validation', { 'email-verify': 3, 'email-send': 1 }),
  Q('keyword', 'hotel prices', { hotels: 3 }),
  Q('keyword', 'air quality', { 'w-air': 3 }),
  Q('keyword', 'shipping rates', { shipping: 3, tracking: 1 }),
  Q('keyword', 'translate', { translate: 3 }),
  Q(
    'sentence',
    "Hi! I'm building a travel assistant and need the hourly weather forecast for a city next week, ideally cheap and returning JSON. Can you find one?",
    { 'w-forecast': 3, 'w-current': 2, 'w-alerts': 1, 'w-history': 1 },
  ),
  Q(
    'sentence',
    "Could you please find me a service that converts 250 euros into US dollars at today's rate? I only need a single JSON number.",
    { 'fx-convert': 3, 'fx-rates': 2, 'fx-history': 1 },
  ),
  Q('sentence', "I have a stack of scanned receipts as images and I'd like the totals and dates pulled out as structured data, please.", {
    invoice: 3,
    ocr: 2,
    'pdf-extract': 1,
  }),
  Q(
    'sentence',
    "We need to check whether our customers' email addresses are real before sending a newsletter; something cheap per call would be great.",
    { 'email-verify': 3, 'email-send': 1 },
  ),
  Q(
    'sentence',
    'My agent has to turn a list of street addresses into latitude and longitude coordinates for a delivery map, under a cent per request if possible.',
    { geocode: 3, 'reverse-geo': 1, routing: 1 },
  ),
  Q('sentence', "Please look up the current price of bitcoin in USD; I'm writing a portfolio tracker and want real-time data.", {
    'crypto-prices': 3,
    'crypto-wallet': 1,
    stocks: 1,
  }),
  Q(
    'sentence',
    "I'd like to transcribe a few voice notes from a meeting into text so I can search them later. Any speech recognition API?",
    { stt: 3, tts: 1 },
  ),
  Q('sentence', 'Hello, can you find an API that tells me if there are storm or flood warnings near my location today? Thanks a lot!', {
    'w-alerts': 3,
    'w-current': 1,
    'w-forecast': 1,
  }),
  Q(
    'sentence',
    "For a compliance check I need to validate a European VAT number and get the company name it's registered to, JSON output preferred.",
    { vat: 3, company: 2 },
  ),
  Q(
    'sentence',
    'I want to extract the tables and text from a long PDF contract and then get a short summary of it; which services can do that?',
    { 'pdf-extract': 3, summarize: 3, ocr: 1 },
  ),
  Q('sentence', "Our support bot should send SMS text messages to customers in several countries; what's the cheapest gateway you have?", {
    sms: 3,
    'email-send': 1,
  }),
  Q('sentence', 'Can you get me the past daily exchange rates between the dollar and the yen for the last five years, as CSV or JSON?', {
    'fx-history': 3,
    'fx-rates': 2,
    'fx-convert': 1,
  }),
  Q('intent', 'is there a cheaper way to send this parcel abroad', { shipping: 3, tracking: 1 }),
  Q('intent', 'will I need an umbrella tomorrow in Paris', { 'w-forecast': 3, 'w-current': 1, 'w-alerts': 1 }),
  Q('intent', 'how much is my money worth in yen', { 'fx-convert': 3, 'fx-rates': 2 }),
  Q('intent', 'read the handwriting in this photo of a note', { ocr: 3 }),
  Q('intent', 'where is my package right now', { tracking: 3, shipping: 1 }),
  Q('intent', 'make this blurry picture sharper and bigger', { 'img-upscale': 3 }),
  Q('intent', 'is the air in Delhi safe to breathe today', { 'w-air': 3 }),
  Q('intent', 'what time is it in Tokyo now', { timezone: 3 }),
  Q('intent', 'tell me something funny', { joke: 3 }),
  Q('intent', 'what can I cook with eggs and spinach', { recipes: 3 }),
];

/** nDCG@10 (gain 2^grade − 1, log2 discount), MRR@10 (first result of grade ≥ 2) and top-1 (the first result is a grade-3 one). */
export function scores(
  ranked: string[],
  grades: Record<string, number>,
): { ndcg: number; mrr: number; top1: boolean; irrelevantFirst: boolean } {
  const dcg = (gains: number[]) => gains.slice(0, 10).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(grades).sort((a, b) => b - a));
  const first = ranked.slice(0, 10).findIndex((key) => (grades[key] ?? 0) >= 2);
  return {
    ndcg: dcg(ranked.map((key) => grades[key] ?? 0)) / ideal,
    mrr: first < 0 ? 0 : 1 / (first + 1),
    top1: (grades[ranked[0] ?? ''] ?? 0) === 3,
    irrelevantFirst: ranked.length > 0 && (grades[ranked[0]!] ?? 0) === 0,
  };
}
