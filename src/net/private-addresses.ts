/**
 * Which network addresses svc and its agent tool server may reach on a seller's behalf
 * (docs/SECURITY.md "SSRF", docs/MCP.md, docs/CATALOG.md). Only globally routable unicast
 * addresses: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT
 * (metadata at 100.100.100.200), unique-local (metadata at fd00:ec2::254), multicast, broadcast,
 * unspecified, reserved and the IPv6 transition ranges that embed an IPv4 address are refused —
 * unless the address falls in the dev-only allow-list `ALLOW_PRIVATE_TARGETS` (CIDRs, e.g.
 * `127.0.0.0/8,::1/128`), which `npm run dev` sets for its local sellers.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ConfigError } from '../config-env.ts';

/** The environment variable holding the allow-list (comma-separated CIDRs or single addresses). */
export const ALLOW_PRIVATE_TARGETS = 'ALLOW_PRIVATE_TARGETS';

export type AllowList = ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

/**
 * Parses the allow-list; throws a ConfigError naming ALLOW_PRIVATE_TARGETS on an entry that is not
 * an address or CIDR (svc's and the tool server's configuration check it at start).
 */
export function parseAllowList(text: string | undefined): AllowList {
  if (!text || text.trim() === '') return [];
  return text.split(',').map((raw) => {
    const entry = raw.trim();
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const ip = ipaddr.parse(entry);
      return [ip, ip.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    } catch {
      throw new ConfigError(ALLOW_PRIVATE_TARGETS, `${JSON.stringify(entry.slice(0, 64))} is not an IP address or CIDR range`);
    }
  });
}

let cached: { text: string | undefined; list: AllowList } | undefined;
/** The allow-list configured in this process's environment (parsed once per distinct value). */
export function allowListFromEnv(env: Record<string, string | undefined> = process.env): AllowList {
  const text = env[ALLOW_PRIVATE_TARGETS];
  if (!cached || cached.text !== text) cached = { text, list: parseAllowList(text) };
  return cached.list;
}

function normalized(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return null;
  const ip = ipaddr.parse(bare);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/**
 * Why an IP address may not be reached, or null when it may: only 'unicast' (globally routable)
 * ranges pass, or an address inside the allow-list.
 */
export function forbiddenAddressReason(address: string, allow: AllowList = allowListFromEnv()): string | null {
  const ip = normalized(address);
  if (!ip) return `${address} is not an IP address`;
  const range = ip.range();
  if (range === 'unicast') return null;
  if (allow.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return null;
  return `${address} is a ${range} address`;
}

/**
 * For a URL host: the reason when it is an IP literal that may not be reached, else null (a name
 * is checked when it is resolved, see src/net/guarded-fetch.ts).
 */
export function forbiddenLiteralHost(hostname: string, allow: AllowList = allowListFromEnv()): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare) === 0) {
    // WHATWG URL parsing already turned decimal/octal/hex IPv4 forms into dotted quads, and
    // `localhost` names loopback by definition.
    return /^localhost\.?$/i.test(bare) || /\.localhost\.?$/i.test(bare)
      ? forbiddenAddressReason('127.0.0.1', allow) && `${hostname} names loopback`
      : null;
  }
  return forbiddenAddressReason(bare, allow);
}
