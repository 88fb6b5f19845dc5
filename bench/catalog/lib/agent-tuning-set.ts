/**
 * The tuning set of search for agents (docs/BENCHMARKS.md "Search for agents"): intent queries phrased
 * without the target listing's own words, over the evaluation's 48 listings (./agent-eval-set.ts). The
 * weight and reach of word-vector neighbours (src/catalog/word-neighbours.ts) were chosen on this set
 * alone; it was written before reading the evaluation's own intent queries, which were not tuned to.
 *
 *   npx tsx bench/catalog/agent-eval.ts --tuning
 */
import type { EvalQuery } from './agent-eval-set.ts';

const T = (query: string, grades: Record<string, number>): EvalQuery => ({ set: 'intent', query, grades });

export const TUNING_QUERIES: EvalQuery[] = [
  T('will I need an umbrella in Paris tomorrow', { 'w-forecast': 3, 'w-current': 1, 'w-alerts': 1 }),
  T('how much is one pound sterling worth in yen', { 'fx-convert': 3, 'fx-rates': 2 }),
  T('read the words off a picture of a street sign', { ocr: 3 }),
  T('read this aloud for me as an mp3', { tts: 3 }),
  T('write down what was said during the podcast interview', { stt: 3 }),
  T('is a hurricane or tornado headed toward my town', { 'w-alerts': 3, 'w-forecast': 1 }),
  T('is the smog bad outside today in Delhi', { 'w-air': 3 }),
  T('when is low water at the harbour and how big is the surf', { 'w-marine': 3 }),
  T('how much ether is held at this 0x account', { 'crypto-wallet': 3, 'crypto-prices': 1 }),
  T('how is Tesla trading on Nasdaq at the moment', { stocks: 3 }),
  T('make this blurry picture sharper and bigger', { 'img-upscale': 3 }),
  T('draw me a cat wearing a hat', { 'img-gen': 3 }),
  T('erase what is behind the person in my selfie', { 'bg-remove': 3 }),
  T('is this mailbox real before I write to it', { 'email-verify': 3, 'email-send': 1 }),
  T("ping customers' mobiles with a short reminder", { sms: 3 }),
  T('is example.org taken', { whois: 3, dns: 1 }),
  T('which mail server handles this hostname', { dns: 3 }),
  T('where is my order right now, it was shipped last week', { tracking: 3, shipping: 1 }),
  T('are banks closed in Japan on the fifth of May', { holidays: 3 }),
  T('what hour is it now in Sydney', { timezone: 3 }),
  T('how do I get by car from Lyon to Geneva', { routing: 3 }),
  T('give me the gist of this report in three lines', { summarize: 3 }),
  T('are people happy or angry about our launch on twitter', { sentiment: 3 }),
  T('fix typos in my cover letter', { grammar: 3 }),
  T('has this airplane landed yet', { flights: 3 }),
  T('cheapest place to sleep in Rome next weekend', { hotels: 3 }),
  T('who are the directors of this firm', { company: 3 }),
  T('something funny to cheer me up', { joke: 3 }),
  T('pin for 10 Downing Street as GPS numbers', { geocode: 3 }),
  T('where in the world is the visitor with 8.8.8.8', { 'ip-geo': 3 }),
  T('pull the total and merchant off a till slip', { invoice: 3 }),
  T('turn my webpage into a printable document', { 'pdf-generate': 3 }),
  T('grab the article body from this link without ads', { scrape: 3 }),
  T("what happened in Brazil's election today", { news: 3 }),
  T('put that paragraph into Spanish', { translate: 3 }),
];
