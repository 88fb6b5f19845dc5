/**
 * Postgres' table of resource URL suffixes (src/catalog/postgres/url-suffixes.ts): kept with the listings (written with
 * a new one, deleted with a removed one, emptied by TRUNCATE), and the index range a `url` is looked up in.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { SUFFIX_LENGTH, suffixRange } from '../../src/catalog/postgres/url-suffixes.ts';
import { asciiLower } from '../../src/catalog/url-filter.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { freshCatalogDatabase } from '../helpers/postgres.ts';
import { storeDraft } from './fixtures.ts';

/** A listing of `resource` (an MCP tool when `toolName` is given: another listing of the same URL). */
function draft(resource: string, toolName = ''): ListingDraft {
  const listing = { ...storeDraft(0, { network: 'stellar:testnet', asset: 'CASSET', metadata: { description: 'a listing' } }), resource };
  return toolName ? { ...listing, type: 'mcp', toolName, bazaar: { info: { input: { type: 'mcp' } } } } : listing;
}

/** Every (suffix, listing) pair the table should hold for `listings` (id and resource URL each). */
function expectedSuffixes(listings: Array<{ id: string; resource: string }>): string[] {
  const pairs = new Set<string>();
  for (const { id, resource } of listings) {
    const chars = Array.from(asciiLower(resource));
    for (let i = 0; i < chars.length; i++) pairs.add(`${chars.slice(i, i + SUFFIX_LENGTH).join('')} ${id}`);
  }
  return [...pairs].sort();
}

let databaseUrl: string;
let store: PostgresCatalogStore;
let client: pg.Client;

beforeAll(async () => {
  databaseUrl = await freshCatalogDatabase();
  store = await PostgresCatalogStore.open(databaseUrl);
  client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
}, 60_000);
afterAll(async () => {
  await client?.end();
  await store?.end();
});

describe("Postgres' URL suffixes", () => {
  const held = async () =>
    (await client.query<{ pair: string }>("SELECT suffix || ' ' || listing_id AS pair FROM listing_url_suffixes")).rows
      .map((r) => r.pair)
      .sort();
  const listings = async () => (await client.query<{ id: string; resource: string }>('SELECT id::text, resource FROM listings')).rows;

  it('are written with each listing, deleted with it and emptied with the listings', async () => {
    const at = new Date('2026-02-01T00:00:00Z');
    const urls = ['https://API.Weather.example.com/v1/forecast?city=Lyon', 'https://tools.example/lolololo', 'https://Ünï.example/é/€'];
    for (const url of urls) await store.writeListing(draft(url), at);
    await store.writeListing(draft(urls[0]!, 'tool'), at);
    await store.writeListing(draft(urls[0]!), new Date(at.getTime() + 1000)); // written again: the same listing
    expect((await listings()).length).toBe(4);
    expect(await held()).toEqual(expectedSuffixes(await listings()));
    // A listing removed (as a withdrawal removes it): its suffixes go, the other listing of its URL keeps its own.
    await client.query('DELETE FROM listings WHERE resource = $1 AND tool_name = $2', [urls[0], 'tool']);
    expect(await held()).toEqual(expectedSuffixes(await listings()));
    // Found by their range, any letter case in the filter.
    const page = await store.list({ url: 'EXAMPLE.COM/V1/FORECAST?CITY=LYON' }, { limit: 10, offset: 0 }, at);
    expect(page.items.map((item) => item.resource)).toEqual([urls[0]]);
    expect((await store.list({ url: 'lololo' }, { limit: 10, offset: 0 }, at)).total).toBe(1);
    expect((await store.list({ url: 'ünï.example/é/€' }, { limit: 10, offset: 0 }, at)).total).toBe(0); // only ASCII letters are lowered
    expect((await store.list({ url: 'Ünï.example/é/€' }, { limit: 10, offset: 0 }, at)).total).toBe(1);
    await client.query('TRUNCATE listings CASCADE');
    expect(await held()).toEqual([]);
  });

  it('a range holds every key starting with the first characters kept, and no other', () => {
    expect(suffixRange('abc')).toEqual({ from: 'abc', to: 'abd', short: true });
    const long = 'x'.repeat(SUFFIX_LENGTH) + 'tail';
    expect(suffixRange(long)).toEqual({ from: 'x'.repeat(SUFFIX_LENGTH), to: 'x'.repeat(SUFFIX_LENGTH - 1) + 'y', short: false });
    // The largest code point is dropped and the one before it raised; surrogates are not code points.
    expect(suffixRange('a\u{10FFFF}')).toEqual({ from: 'a\u{10FFFF}', to: 'b', short: true });
    expect(suffixRange('a\ud7ff')).toEqual({ from: 'a\ud7ff', to: 'a\ue000', short: true });
    expect(suffixRange('\u{10FFFF}\u{10FFFF}\u{10FFFF}')).toEqual({ from: '\u{10FFFF}\u{10FFFF}\u{10FFFF}', to: undefined, short: true });
    // A lone surrogate reaches Postgres as U+FFFD.
    expect(suffixRange('ab\ud800')).toEqual({ from: 'ab\ufffd', to: 'ab\ufffe', short: true });
  });
});
