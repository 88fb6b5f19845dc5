/**
 * A listing withdrawn by its owner (CatalogPort.withdraw; docs/CATALOG.md "Withdrawing a
 * listing"), on SQLite and PostgreSQL: it leaves list (items and every total) and search with its
 * quality signals and owner binding; another owner, an unknown listing and a replayed withdrawal
 * change nothing; a later settlement lists it again, for any payTo.
 */
import { describe, expect, it } from 'vitest';
import { ASSET, PAY_TO_A, PAY_TO_B, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogPerTest } from './fresh.ts';

type Temp = ReturnType<typeof tempCatalog>;
const A = 'https://a.example.com/weather';
const B = 'https://b.example.com/weather';
const TOOLS = 'https://tools.example.com/mcp';
const paid = (url: string, payTo = PAY_TO_A, payer = 'P1', mcpTool?: string) => ({
  ...settlement({ url, payTo, description: 'weather forecast', ...(mcpTool ? { mcpTool } : {}) }),
  payment: { payer },
});

describe.each(BACKENDS)('on %s', (backend) => {
  const fresh = freshCatalogPerTest(backend);
  /** What list (with each filter) and search show: resources, and that every total agrees with its items. */
  const shown = async (t: Temp) => {
    const views: Record<string, string[]> = {};
    const filters: Record<string, Record<string, string>> = {
      all: {},
      payToA: { payTo: PAY_TO_A },
      payToB: { payTo: PAY_TO_B },
      http: { type: 'http' },
      mcp: { type: 'mcp' },
      network: { network: 'stellar:testnet' },
      pair: { scheme: 'exact', network: 'stellar:testnet' },
      asset: { asset: ASSET },
      bazaar: { extensions: 'bazaar' },
    };
    for (const [name, f] of Object.entries(filters)) {
      const page = await t.catalog.list(f, { limit: 100, offset: 0 });
      expect(page.pagination.total, name).toBe(page.items.length);
      views[name] = page.items.map((i) => `${i.resource}${i.type === 'mcp' ? '#mcp' : ''}`).sort();
    }
    views.search = (await t.catalog.search('weather', {}, { limit: 100 })).resources.map((r) => r.resource).sort();
    views.searchA = (await t.catalog.search('weather', { payTo: PAY_TO_A }, { limit: 100 })).resources.map((r) => r.resource).sort();
    return views;
  };
  const withdraw = (t: Temp, resource: string, owner = PAY_TO_A, issuedAtMs = t.clock().getTime(), type = 'http', toolName = '') =>
    t.catalog.withdraw!({ resource, type, toolName, owner, issuedAtMs });

  it('the owner withdraws one listing: gone from list (every filter and total) and search, the others stay', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(paid(A));
    await t.catalog.recordSettlement(paid(B));
    await t.catalog.recordSettlement(paid(TOOLS, PAY_TO_A, 'P1', 'forecast'));
    const before = await shown(t);
    expect(before.all).toEqual([A, B, `${TOOLS}#mcp`]);
    expect(before.search).toEqual([A, B, TOOLS]);
    t.tick();
    expect(await withdraw(t, A)).toEqual({ status: 'delisted' });
    const after = await shown(t);
    for (const name of Object.keys(before)) expect(after[name], name).toEqual(before[name]!.filter((r) => r !== A));
    expect((await t.catalog.list({ resource: A }, { limit: 10, offset: 0 })).pagination.total).toBe(0);
    // An MCP tool is named by its toolName too.
    expect(await withdraw(t, TOOLS, PAY_TO_A, t.clock().getTime(), 'mcp', 'other')).toEqual({ status: 'unknown' });
    expect(await withdraw(t, TOOLS, PAY_TO_A, t.clock().getTime(), 'mcp', 'forecast')).toEqual({ status: 'delisted' });
    expect((await shown(t)).all).toEqual([B]);
  });

  it('another payTo, an unknown listing: refused, nothing changes', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(paid(A));
    const before = await shown(t);
    expect(await withdraw(t, A, PAY_TO_B)).toEqual({ status: 'not_owner', owner: PAY_TO_A });
    expect(await withdraw(t, 'https://a.example.com/other')).toEqual({ status: 'unknown' });
    expect(await withdraw(t, A, PAY_TO_A, t.clock().getTime(), 'mcp')).toEqual({ status: 'unknown' });
    expect(await shown(t)).toEqual(before);
  });

  it('a later settlement lists it again, new (quality from zero) and for any payTo; a replayed withdrawal is refused, a newer one accepted', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(paid(A, PAY_TO_A, 'P1'));
    await t.catalog.recordSettlement(paid(A, PAY_TO_A, 'P2'));
    const signedAt = t.clock().getTime();
    expect(await withdraw(t, A, PAY_TO_A, signedAt)).toEqual({ status: 'delisted' });
    t.tick();
    // The owner binding went with the listing: PAY_TO_B's settlement lists it as a new listing.
    expect(await t.catalog.recordSettlement(paid(A, PAY_TO_B, 'P3'))).toEqual({ status: 'success' });
    const [relisted] = (await t.catalog.list({ resource: A }, { limit: 1, offset: 0 })).items;
    expect(relisted!.accepts.map((a) => a.payTo)).toEqual([PAY_TO_B]);
    expect(relisted!.quality).toMatchObject({ l30DaysTotalCalls: 1, l30DaysUniquePayers: 1 });
    expect((await shown(t)).payToB).toEqual([A]);
    // The same signed withdrawal again (by the new owner's key here, so only its time refuses it).
    expect(await withdraw(t, A, PAY_TO_B, signedAt)).toEqual({ status: 'replayed', lastIssuedAtMs: signedAt });
    expect(await withdraw(t, A, PAY_TO_B, signedAt - 1)).toEqual({ status: 'replayed', lastIssuedAtMs: signedAt });
    expect((await shown(t)).all).toEqual([A]);
    expect(await withdraw(t, A, PAY_TO_B, signedAt + 1)).toEqual({ status: 'delisted' });
    expect((await shown(t)).all).toEqual([]);
    // Listed once more by its first owner: every total counts it once.
    await t.catalog.recordSettlement(paid(A, PAY_TO_A, 'P4'));
    await t.catalog.recordSettlement(paid(B, PAY_TO_A, 'P4'));
    const again = await shown(t);
    expect(again.all).toEqual([A, B]);
    expect(again.payToA).toEqual([A, B]);
    expect(again.payToB).toEqual([]);
  });

  it('a search cursor issued before a withdrawal walks on without it', async () => {
    const t = fresh();
    const urls = Array.from({ length: 6 }, (_, i) => `https://w${i}.example.com/weather`);
    for (const url of urls) await t.catalog.recordSettlement(paid(url));
    const first = await t.catalog.search('weather', {}, { limit: 2 });
    const seen = first.resources.map((r) => r.resource);
    const gone = urls.find((u) => !seen.includes(u))!;
    expect(await withdraw(t, gone)).toEqual({ status: 'delisted' });
    let cursor = first.pagination.cursor ?? undefined;
    while (cursor) {
      const page = await t.catalog.search('weather', {}, { limit: 2, cursor });
      seen.push(...page.resources.map((r) => r.resource));
      cursor = page.pagination.cursor ?? undefined;
    }
    expect(seen.sort()).toEqual(urls.filter((u) => u !== gone).sort());
  });
});
