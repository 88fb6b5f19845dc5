/**
 * Field rules of the catalog write (openapi.yaml DiscoveryResource, docs/CATALOG.md "Field-level drops"): the resource URL, the
 * routeTemplate hardening, and the field-level sanitizers whose failure drops only that field.
 * Pure functions over untrusted JSON; every loop is bounded by a constant.
 */
import { lookalikeHostReason } from '../../net/idn-hosts.ts';
import { ALLOW_PRIVATE_TARGETS, allowListFromEnv, forbiddenLiteralHost } from '../../net/private-addresses.ts';

const MAX_ROUTE_TEMPLATE_DECODE_PASSES = 5;
const MAX_SERVICE_NAME_LENGTH = 32;
const MAX_TAGS = 5;
const MAX_TAG_LENGTH = 32;
const MAX_ICON_URL_LENGTH = 2048;
const MAX_ROUTE_TEMPLATE_LENGTH = 2048;

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
/** C0 controls (including NUL), DEL and C1 controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_CHAR = /[\x00-\x1f\x7f-\x9f]/;
/** The characters a route template may use before decoding: a path plus `:name` params and %-escapes. */
const ROUTE_TEMPLATE_CHARS = /^\/[A-Za-z0-9_/:.\-~%]*$/;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The reason of bazaar_resource_url_invalid when the URL itself is unusable. */
export const RESOURCE_URL_REASON = 'resource.url must be an absolute http(s) URL without credentials.';

/**
 * The resource URL, or why it is refused: an absolute http(s) URL without credentials. A host
 * that is a loopback, private, link-local, multicast or metadata IP literal (or `localhost`) is
 * refused too, unless ALLOW_PRIVATE_TARGETS covers it (docs/CATALOG.md "Checks, in order"): a listing must never
 * point an agent at the network it runs in. So is an internationalized host that may imitate
 * another (mixed scripts, a Latin look-alike script: src/net/idn-hosts.ts), so that a look-alike
 * of a listed host cannot become a rival listing.
 */
export function checkResourceUrl(value: unknown): { ok: true; url: URL } | { ok: false; reason: string } {
  const refused = { ok: false, reason: RESOURCE_URL_REASON } as const;
  if (typeof value !== 'string' || value === '' || CONTROL_CHAR.test(value)) return refused;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refused;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused;
  if (url.username !== '' || url.password !== '') return refused;
  if (url.hostname === '') return refused;
  const forbidden = forbiddenLiteralHost(url.hostname, allowListFromEnv());
  if (forbidden)
    return {
      ok: false,
      reason: `resource.url names a host buyers elsewhere cannot reach: ${forbidden}. svc lists only publicly routable hosts; ${ALLOW_PRIVATE_TARGETS} (CIDRs, e.g. 127.0.0.0/8) allows private ones, for local development only.`,
    };
  const lookalike = lookalikeHostReason(url.hostname);
  if (lookalike) return { ok: false, reason: `resource.url ${lookalike}.` };
  return { ok: true, url };
}

/** Why a routeTemplate layer is refused, or null when the layer is clean. */
function routeLayerDefect(layer: string): string | null {
  if (layer.includes('..')) return 'contains ..';
  if (layer.includes('://')) return 'contains ://';
  if (layer.includes('\\')) return 'contains a backslash';
  if (CONTROL_CHAR.test(layer)) return 'contains a control character';
  if (layer.startsWith('//')) return 'begins with //';
  return null;
}

/**
 * The route template: the template itself when valid, else the reason it is dropped. Percent-decoding
 * is repeated at most 5 times and must reach a fixed point; every layer (the raw one included)
 * is checked for traversal, scheme smuggling, backslashes, control characters and `//`.
 */
export function checkRouteTemplate(value: unknown): { ok: true; template: string } | { ok: false; reason: string } {
  if (typeof value !== 'string') return { ok: false, reason: 'routeTemplate is not a string' };
  if (value.length > MAX_ROUTE_TEMPLATE_LENGTH) return { ok: false, reason: 'routeTemplate is too long' };
  if (!ROUTE_TEMPLATE_CHARS.test(value)) {
    return { ok: false, reason: 'routeTemplate must start with / and use only [A-Za-z0-9_/:.-~%]' };
  }
  const segments = value.split('/').filter((segment) => segment !== '');
  if (segments.length > 0 && segments.every((segment) => segment.startsWith(':')))
    return { ok: false, reason: 'routeTemplate has no literal path segment, so it would name every path of its host' };
  let layer = value;
  for (let pass = 0; ; pass++) {
    const defect = routeLayerDefect(layer);
    if (defect) return { ok: false, reason: `routeTemplate ${defect} after ${pass} decode pass(es)` };
    let next: string;
    try {
      next = decodeURIComponent(layer);
    } catch {
      return { ok: false, reason: 'routeTemplate has a malformed percent-escape' };
    }
    if (next === layer) return { ok: true, template: value };
    if (pass + 1 >= MAX_ROUTE_TEMPLATE_DECODE_PASSES) {
      // The layer after the last allowed pass must itself be clean and stable.
      const lastDefect = routeLayerDefect(next);
      if (lastDefect) return { ok: false, reason: `routeTemplate ${lastDefect} after ${pass + 1} decode passes` };
      return { ok: false, reason: `routeTemplate does not stabilize within ${MAX_ROUTE_TEMPLATE_DECODE_PASSES} decode passes` };
    }
    layer = next;
  }
}

/**
 * The listing identity: origin + valid routeTemplate, else origin + pathname; query and fragment
 * never kept. Spellings RFC 3986 §6.2.2–6.2.3 calls equivalent become one (docs/CATALOG.md "Canonical identity"):
 * scheme and host lowercase, the default port dropped, an empty path is "/" (the WHATWG parser
 * does these), a trailing dot of the host dropped, percent-encoded unreserved characters
 * (A–Z a–z 0–9 - . _ ~) decoded and other escapes in upper-case hex. Beyond the RFC, a trailing
 * slash after a non-empty path is dropped ("/weather/" is "/weather"), because no seller serves a
 * different paid resource there and a second seller used it to squat. http and https, and the
 * case of the path, stay distinct: they can name different resources.
 */
export function canonicalResourceUrl(url: URL, routeTemplate: string | undefined): string {
  const host = url.host.replace(/\.+(?=:|$)/, '');
  return `${url.protocol}//${host}${canonicalPath(routeTemplate ?? url.pathname)}`;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

function canonicalPath(path: string): string {
  const decoded = path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  const trimmed = decoded.length > 1 ? decoded.replace(/\/+$/, '') : decoded;
  return trimmed === '' ? '/' : trimmed;
}

function isPrintableAscii(value: string, maxLength: number): boolean {
  return value.length >= 1 && value.length <= maxLength && PRINTABLE_ASCII.test(value);
}

/** serviceName: 1–32 printable ASCII characters, else dropped (surrounding blanks are not trimmed). */
export function sanitizeServiceName(value: unknown): string | undefined {
  return typeof value === 'string' && isPrintableAscii(value, MAX_SERVICE_NAME_LENGTH) && value.trim() !== '' ? value : undefined;
}

/**
 * tags: entries that are not 1–32 printable-ASCII strings are skipped, duplicates (case-insensitive)
 * keep their first spelling, and only the first 5 survivors are kept. No survivor drops the field.
 * Only the first 64 entries are looked at (bounded work).
 */
export function sanitizeTags(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: string[] = [];
  const seen = new Set<string>();
  for (const entry of value.slice(0, 64)) {
    if (typeof entry !== 'string' || !isPrintableAscii(entry, MAX_TAG_LENGTH) || entry.trim() === '') continue;
    const key = entry.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
    if (out.length === MAX_TAGS) break;
  }
  return out.length > 0 ? out : undefined;
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);
/** A host that is an integer in any base, or dotted parts of integers: an IP literal in disguise. */
const NUMERIC_HOST = /^(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+))*\.?$/i;

function decodeFully(value: string): string | null {
  let layer = value;
  for (let pass = 0; pass < MAX_ROUTE_TEMPLATE_DECODE_PASSES; pass++) {
    let next: string;
    try {
      next = decodeURIComponent(layer);
    } catch {
      return null;
    }
    if (next === layer) return layer;
    layer = next;
  }
  return null;
}

/** Reason a host is hostile (IP literal, loopback, integer forms), or null. */
function hostileHost(host: string): string | null {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === '') return 'empty host';
  if (h.startsWith('[') || h.includes(':')) return 'IPv6 literal';
  if (NUMERIC_HOST.test(h)) return 'IPv4 or integer literal';
  if (LOOPBACK_NAMES.has(h) || h.endsWith('.localhost')) return 'loopback name';
  return null;
}

/**
 * iconUrl: absolute http(s), at most 2048 characters, no userinfo, and a host that is neither an
 * IP literal (v4, v6, decimal/hex/octal integer forms) nor a loopback name. The host is checked
 * twice: as the WHATWG parser normalizes it, and as written in the raw authority after
 * percent-decoding, so an encoded form cannot slip past either view.
 */
export function sanitizeIconUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_ICON_URL_LENGTH) return undefined;
  // The resource URL's rules (control characters, credentials, private hosts, look-alikes) first.
  const checked = checkResourceUrl(value);
  if (!checked.ok || hostileHost(checked.url.hostname)) return undefined;
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(value)?.[1];
  if (authority === undefined) return undefined;
  const decoded = decodeFully(authority);
  if (decoded === null || decoded.includes('@')) return undefined;
  const rawHost = decoded.startsWith('[') ? decoded : decoded.replace(/:[0-9]*$/, '');
  if (hostileHost(rawHost)) return undefined;
  return value;
}

/** A plain string field (description, mimeType): kept when a string, else absent. */
export function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
