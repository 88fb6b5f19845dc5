/**
 * Agent resource ids (docs/MCP.md): `svc1:` + base64url(JSON.stringify([type, resource, toolName])),
 * toolName "" for http. Encoding is a pure function of the listing identity, so every tool server
 * gives one listing the same id. Parsing is strict and accepts only the canonical encoding, so an
 * id and a listing correspond one to one.
 */
export const RESOURCE_ID_PREFIX = 'svc1:';
/** Longer ids are refused before decoding (a canonical URL plus a tool name fits easily). */
export const MAX_RESOURCE_ID_LENGTH = 8192;

export interface ListingRef {
  type: 'http' | 'mcp';
  /** Canonical resource URL, as the catalog lists it. */
  resource: string;
  /** MCP tool name; "" for http. */
  toolName: string;
}

export type ParsedResourceId = { ok: true; ref: ListingRef } | { ok: false; reason: string };

const BASE64URL_UNPADDED = /^[A-Za-z0-9_-]+$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function encodeResourceId(ref: ListingRef): string {
  return RESOURCE_ID_PREFIX + Buffer.from(JSON.stringify([ref.type, ref.resource, ref.toolName]), 'utf8').toString('base64url');
}

/** An absolute http(s) URL without credentials (the catalog's rule for resource URLs). */
export function isAbsoluteHttpUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
}

/** The identity a listing check accepts, or why not. Shared by id parsing and url targets. */
export function checkListingRef(type: unknown, resource: unknown, toolName: unknown): ParsedResourceId {
  if (type !== 'http' && type !== 'mcp') return { ok: false, reason: `type must be "http" or "mcp", got ${JSON.stringify(type)}` };
  if (typeof resource !== 'string' || !isAbsoluteHttpUrl(resource))
    return { ok: false, reason: 'the resource is not an absolute http(s) URL without credentials' };
  if (typeof toolName !== 'string') return { ok: false, reason: 'toolName must be a string' };
  if (type === 'http' && toolName !== '') return { ok: false, reason: 'an http listing has an empty toolName' };
  if (type === 'mcp' && toolName === '') return { ok: false, reason: 'an mcp listing needs a non-empty toolName' };
  return { ok: true, ref: { type, resource, toolName } };
}

export function parseResourceId(id: unknown): ParsedResourceId {
  const fail = (reason: string): ParsedResourceId => ({ ok: false, reason: `Malformed resource id: ${reason}.` });
  if (typeof id !== 'string') return fail('not a string');
  if (id.length > MAX_RESOURCE_ID_LENGTH) return fail(`longer than ${MAX_RESOURCE_ID_LENGTH} characters`);
  if (!id.startsWith(RESOURCE_ID_PREFIX)) return fail(`it must start with ${RESOURCE_ID_PREFIX}`);
  const body = id.slice(RESOURCE_ID_PREFIX.length);
  if (!BASE64URL_UNPADDED.test(body)) return fail('the part after the prefix is not unpadded base64url');
  const bytes = Buffer.from(body, 'base64url');
  // Node decodes leniently (stray trailing bits, impossible lengths): only the canonical text is accepted.
  if (bytes.toString('base64url') !== body) return fail('the base64url is not canonical');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return fail('it does not decode to UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('it does not decode to JSON');
  }
  if (!Array.isArray(value) || value.length !== 3) return fail('it must decode to a JSON array of exactly 3 elements');
  if (!value.every((v) => typeof v === 'string')) return fail('all 3 elements must be strings');
  const checked = checkListingRef(value[0], value[1], value[2]);
  if (!checked.ok) return fail(checked.reason);
  if (encodeResourceId(checked.ref) !== id) return fail('it is not the canonical encoding of its listing');
  return checked;
}
