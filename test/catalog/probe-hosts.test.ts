/**
 * The outbound bound's host slots (src/catalog/probe-hosts.ts; docs/SECURITY.md "Requests svc makes of sellers' hosts") on
 * both stores: a host is asked once per interval, and a slot taken before its request is sent runs one interval from the
 * send.
 */
import { describe, expect, it } from 'vitest';
import { BACKENDS, freshCatalogPerTest } from './fresh.ts';

const INTERVAL_MS = 60_000;

describe.each(BACKENDS)('host slots on %s', (backend) => {
  const fresh = freshCatalogPerTest(backend);

  it('takes a host once per interval, counted from the send', async () => {
    const t = fresh();
    const start = t.clock().getTime();
    const reserve = (host: string, sent?: boolean) => t.catalog.reserveProbeHost!(host, INTERVAL_MS, sent);
    expect(await reserve('seller.example')).toBe(0);
    expect(await reserve('seller.example')).toBe(start + INTERVAL_MS);
    expect(await reserve('other.example')).toBe(0);
    t.setNow(start + 5_000);
    expect(await reserve('seller.example', true)).toBe(0); // its request goes out 5 s after the slot was taken
    t.setNow(start + INTERVAL_MS + 1_000);
    expect(await reserve('seller.example')).toBe(start + 5_000 + INTERVAL_MS);
    expect(await reserve('other.example')).toBe(0);
    t.setNow(start + 5_000 + INTERVAL_MS);
    expect(await reserve('seller.example')).toBe(0);
  });
});
