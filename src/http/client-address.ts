/**
 * Who a request is from (docs/OPERATIONS.md "Behind a reverse proxy"). Without trusted proxies it
 * is the peer address. When the peer is a trusted proxy (`TRUSTED_PROXIES`), the client is the
 * rightmost address of `X-Forwarded-For` (or RFC 7239 `Forwarded`, `TRUSTED_PROXY_HEADER`) that
 * is not itself a trusted proxy: every address left of it was written by someone svc does not
 * trust, so it may be forged. Every per-client limit, the discovery fair queue and the access log
 * read the one answer `clientAddress` stores on `ctx.state.client`.
 */
import ipaddr from 'ipaddr.js';
import { ConfigError, read, type Env } from '../config-env.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from './middleware.ts';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type ProxyHeader = 'x-forwarded-for' | 'forwarded';

/** TRUSTED_PROXIES and TRUSTED_PROXY_HEADER, parsed. */
export interface TrustedProxies {
  ranges: ReadonlyArray<[Address, number]>;
  header: ProxyHeader;
}

/** `TRUSTED_PROXIES`: comma-separated CIDRs or addresses; unset: no proxy is trusted. */
export function parseTrustedProxies(env: Env): TrustedProxies {
  const value = read(env, 'TRUSTED_PROXIES');
  const ranges = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry, i): [Address, number] => {
      try {
        if (entry.includes('/')) {
          const [ip, bits] = ipaddr.parseCIDR(entry);
          return [unmapped(ip), ip.kind() === 'ipv6' && unmapped(ip).kind() === 'ipv4' ? bits - 96 : bits];
        }
        const ip = unmapped(ipaddr.parse(entry));
        return [ip, ip.kind() === 'ipv4' ? 32 : 128];
      } catch {
        throw new ConfigError('TRUSTED_PROXIES', `entry ${i + 1} is not an IP address or CIDR (e.g. 10.0.0.0/8, ::1)`);
      }
    });
  const header = read(env, 'TRUSTED_PROXY_HEADER') ?? 'x-forwarded-for';
  if (header.toLowerCase() !== 'x-forwarded-for' && header.toLowerCase() !== 'forwarded')
    throw new ConfigError('TRUSTED_PROXY_HEADER', `must be X-Forwarded-For or Forwarded; got ${JSON.stringify(header.slice(0, 40))}`);
  return { ranges, header: header.toLowerCase() as ProxyHeader };
}

function unmapped(ip: Address): Address {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

function parsed(text: string): Address | null {
  return ipaddr.isValid(text) ? unmapped(ipaddr.parse(text)) : null;
}

function trusted(ip: Address, proxies: TrustedProxies): boolean {
  return proxies.ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits));
}

/** The addresses an X-Forwarded-For header lists, left to right; null for an entry that is not an address. */
function forwardedFor(values: string[]): (Address | null)[] {
  return values.flatMap((v) => v.split(',')).map((s) => parsed(s.trim()));
}

/**
 * The `for=` addresses of RFC 7239 `Forwarded` elements, left to right: a quoted
 * `"[2001:db8::1]:4711"` or `"192.0.2.1:80"` loses its port and brackets; `unknown` and
 * obfuscated identifiers (`_hidden`) are null.
 */
function forwardedElements(values: string[]): (Address | null)[] {
  const out: (Address | null)[] = [];
  for (const element of values.flatMap((v) => v.split(','))) {
    const pair = element
      .split(';')
      .map((p) => p.trim())
      .find((p) => p.slice(0, 4).toLowerCase() === 'for=');
    if (pair === undefined) {
      out.push(null);
      continue;
    }
    let node = pair.slice(4).trim();
    if (node.startsWith('"') && node.endsWith('"') && node.length >= 2) node = node.slice(1, -1);
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(node);
    if (bracketed) node = bracketed[1]!;
    else if (/^[0-9.]+:\d+$/.test(node)) node = node.slice(0, node.lastIndexOf(':'));
    out.push(parsed(node));
  }
  return out;
}

/**
 * The client of a request from `peer` carrying `headerValues` of the configured header. A peer
 * that is not trusted is the client, whatever it sends. Walking the list from the right, trusted
 * proxies are skipped; the first other address is the client. An entry that is not an address
 * ends the walk at the trusted hop that passed it on; a list of trusted proxies only gives its
 * leftmost.
 */
export function clientOf(peer: string, headerValues: string[], proxies: TrustedProxies): string {
  const peerIp = parsed(peer);
  if (peerIp === null) return peer;
  if (headerValues.length === 0 || !trusted(peerIp, proxies)) return peerIp.toString();
  const hops = proxies.header === 'forwarded' ? forwardedElements(headerValues) : forwardedFor(headerValues);
  let client = peerIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (hop === null || hop === undefined) break;
    client = hop;
    if (!trusted(hop, proxies)) break;
  }
  return client.toString();
}

/**
 * The key per-client limits count under: an IPv4 client's address, an IPv6 client's /64 (one
 * host's allocation: an address per request costs nothing inside it).
 */
export function limitKeyOf(client: string): string {
  const ip = parsed(client);
  if (ip === null || ip.kind() === 'ipv4') return client;
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/** Sets `ctx.state.client` (first in the pipeline: everything after it reads it). */
export function clientAddress(proxies: TrustedProxies): SvcMiddleware {
  const header = proxies.header;
  return async (ctx: SvcContext, next: SvcNext) => {
    const peer = ctx.req.socket.remoteAddress ?? 'unknown';
    if (proxies.ranges.length === 0) ctx.state.client = peer.startsWith('::ffff:') ? peer.slice(7) : peer;
    else {
      const raw = ctx.req.headersDistinct[header] ?? [];
      ctx.state.client = clientOf(peer, raw, proxies);
    }
    await next();
  };
}
