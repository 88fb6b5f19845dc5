/**
 * Who a request is from (src/http/client-address.ts): the rightmost address of the forwarding
 * header that is not a trusted proxy, when the peer is one; the peer otherwise. The shared
 * validate ceiling (src/http/rate-limit.ts SharedCeiling): past it, a client under its equal
 * share is still answered.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-env.ts';
import { clientOf, limitKeyOf, parseTrustedProxies } from '../../src/http/client-address.ts';
import { SharedCeiling } from '../../src/http/rate-limit.ts';

const xff = parseTrustedProxies({ TRUSTED_PROXIES: '10.0.0.0/8, ::1, 192.168.1.7' });
const fwd = parseTrustedProxies({ TRUSTED_PROXIES: '10.0.0.0/8,::1', TRUSTED_PROXY_HEADER: 'Forwarded' });

describe('clientOf', () => {
  it.each<[string, string, string[], string]>([
    ['untrusted peer: its header is ignored', '203.0.113.9', ['1.2.3.4'], '203.0.113.9'],
    ['trusted peer, one hop', '10.1.1.1', ['198.51.100.7'], '198.51.100.7'],
    ['forged entries left of the real client are ignored', '10.1.1.1', ['6.6.6.6, 198.51.100.7'], '198.51.100.7'],
    ['trusted hops are skipped from the right', '10.1.1.1', ['6.6.6.6, 198.51.100.7, 10.2.2.2, 192.168.1.7'], '198.51.100.7'],
    ['several header lines are one list', '10.1.1.1', ['6.6.6.6', '198.51.100.7, 10.2.2.2'], '198.51.100.7'],
    ['only trusted addresses: the leftmost', '10.1.1.1', ['10.3.3.3, 10.2.2.2'], '10.3.3.3'],
    ['garbage ends the walk at the trusted hop that passed it', '10.1.1.1', ['198.51.100.7, nonsense, 10.2.2.2'], '10.2.2.2'],
    ['an IPv4-mapped peer is its IPv4 address', '::ffff:10.1.1.1', ['198.51.100.7'], '198.51.100.7'],
    ['IPv6 loopback proxy, IPv6 client', '::1', ['2001:db8::5'], '2001:db8::5'],
    ['no header: the peer', '10.1.1.1', [], '10.1.1.1'],
  ])('X-Forwarded-For: %s', (_name, peer, header, client) => {
    expect(clientOf(peer, header, xff)).toBe(client);
  });

  it.each<[string, string[], string]>([
    ['for=192.0.2.60;proto=http;by=203.0.113.43', ['for=192.0.2.60;proto=http;by=203.0.113.43'], '192.0.2.60'],
    ['quoted IPv6 with a port', ['for=6.6.6.6, For="[2001:db8:cafe::17]:4711"'], '2001:db8:cafe::17'],
    ['IPv4 with a port, then a trusted hop', ['for="198.51.100.7:80", for=10.9.9.9'], '198.51.100.7'],
    ['an obfuscated node stops the walk at the hop after it', ['for=_hidden, for=10.9.9.9'], '10.9.9.9'],
  ])('Forwarded: %s', (_name, header, client) => {
    expect(clientOf('10.1.1.1', header, fwd)).toBe(client);
  });

  it('an entry that is not an address or CIDR is a ConfigError naming the entry, not its text', () => {
    expect(() => parseTrustedProxies({ TRUSTED_PROXIES: '10.0.0.0/8,proxy.local' })).toThrow(ConfigError);
    expect(() => parseTrustedProxies({ TRUSTED_PROXIES: '10.0.0.0/8,proxy.local' })).toThrow(/TRUSTED_PROXIES: entry 2 /);
    expect(() => parseTrustedProxies({ TRUSTED_PROXY_HEADER: 'X-Real-IP' })).toThrow(/TRUSTED_PROXY_HEADER/);
  });

  it('an IPv6 client is limited by its /64, an IPv4 client by its address', () => {
    expect(limitKeyOf('2001:db8:1:2:aaaa::1')).toBe(limitKeyOf('2001:db8:1:2:bbbb::9'));
    expect(limitKeyOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(limitKeyOf('198.51.100.7')).toBe('198.51.100.7');
  });
});

describe('SharedCeiling', () => {
  it('12 clients spending 10 each fill a ceiling of 120; a 13th client is answered, the twelve are not', () => {
    let now = 0;
    const ceiling = new SharedCeiling(120, 60_000, () => now);
    for (let c = 0; c < 12; c++) for (let i = 0; i < 10; i++) expect(ceiling.take(`c${c}`)).toBe(0);
    expect(ceiling.take('c0')).toBe(60_000);
    expect(ceiling.take('newcomer')).toBe(0);
    now = 59_000;
    expect(ceiling.take('c5')).toBe(1_000);
    now = 60_000;
    expect(ceiling.take('c5')).toBe(0);
  });

  it('one client alone takes the whole ceiling, then is refused; a window holds at most limit + 1 clients and under 6 × limit requests', () => {
    const ceiling = new SharedCeiling(120, 60_000, () => 0);
    for (let i = 0; i < 120; i++) expect(ceiling.take('greedy')).toBe(0);
    expect(ceiling.take('greedy')).toBeGreaterThan(0);
    let answered = 120;
    for (let c = 0; c < 1000; c++) for (let i = 0; i < 200; i++) if (ceiling.take(`sybil${c}`) === 0) answered++;
    expect(answered).toBeLessThan(6 * 120);
    expect(ceiling.take('late')).toBeGreaterThan(0);
  });
});
