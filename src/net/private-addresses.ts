/**
 * Which network addresses svc and its agent tool server may reach on a seller's behalf
 * (docs/SECURITY.md "SSRF", docs/MCP.md, docs/CATALOG.md). Only globally routable unicast
 * addresses: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT
 * (metadata at 100.100.100.200), unique-local (metadata at fd00:ec2::254), multicast, broadcast,
 * unspecified, reserved and every IPv6 form that embeds an IPv4 address (IPv4-compatible `::/96`,
 * mapped `::ffff:0:0/96` and translated `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`,
 * 6to4 `2002::/16`, Teredo `2001::/32`) are refused — unless the address falls in the dev-only
 * allow-list `ALLOW_PRIVATE_TARGETS` (CIDRs, e.g. `127.0.0.0/8,::1/128`), which `npm run dev` sets
 * for its local sellers. A mapped address is judged as the IPv4 address it is; the other embedding
 * forms are refused whatever they embed (a host or relay may translate them to that IPv4 address).
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
  // ipaddr.js reads `::a.b.c.d` (how libuv prints an IPv4-compatible address, e.g. a resolved AAAA
  // record) as the mapped `::ffff:a.b.c.d`; `::0:a.b.c.d` is the same address, parsed as written.
  const ip = ipaddr.parse(/^::\d+\.\d+\.\d+\.\d+$/.test(bare) ? `::0:${bare.slice(2)}` : bare);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/**
 * The IPv4 address an IPv4-compatible IPv6 address (`::a.b.c.d`, deprecated by RFC 4291) embeds, or
 * null. ipaddr.js calls `::/96` unicast apart from `::` and `::1`, yet a stack that still routes
 * these reaches the embedded IPv4 address (`::7f00:1` is 127.0.0.1, `::a9fe:a9fe` the metadata
 * address), so none of them is reached, whatever the allow-list says.
 */
function ipv4Compatible(ip: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  if (ip.kind() !== 'ipv6') return null;
  const parts = (ip as ipaddr.IPv6).parts;
  if (parts.slice(0, 6).some((p) => p !== 0)) return null;
  // `::` and `::1` are the unspecified and loopback addresses, judged (and allow-listed) as such.
  if (parts[6] === 0 && parts[7]! <= 1) return null;
  return [parts[6]! >> 8, parts[6]! & 0xff, parts[7]! >> 8, parts[7]! & 0xff].join('.');
}

/**
 * Why an IP address may not be reached, or null when it may: only 'unicast' (globally routable)
 * ranges pass, or an address inside the allow-list.
 */
export function forbiddenAddressReason(address: string, allow: AllowList = allowListFromEnv()): string | null {
  const ip = normalized(address);
  if (!ip) return `${address} is not an IP address`;
  const compatible = ipv4Compatible(ip);
  if (compatible) return `${address} is an IPv4-compatible IPv6 address (::/96) embedding ${compatible}`;
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
