/**
 * The catalog hook's pure half (docs/CATALOG.md "The settle hook"): from a settled payment's JSON
 * envelope to either nothing (no `bazaar` echoed), a soft-drop with its code, or a listing draft
 * ready for the store. No I/O here; the store does the atomic ownership check and the write.
 *
 * Order of checks (the first failure wins): extensions size → bazaar shape → protocol
 * invariants → description and accepted-terms size caps → standing (another owner of the
 * canonical resource under first-settlement ownership, or a failed check of its origin still
 * remembered for this payTo: read before any seller schema is compiled, so a squatter cannot make
 * svc run schemas for someone else's listing) → schema neutralization and node cap → client-schema
 * validation (off the event loop with a time budget, schema.ts) → resource URL.
 * Field-level drops (routeTemplate, serviceName, tags, iconUrl) never reject the listing.
 */
import type { BazaarCode } from '../../codes.ts';
import { MAX_SCHEMA_DEPTH, exampleNames, measureJson, neutralizeSchema, parameterText, validateAgainstSchema } from './schema.ts';
import {
  CONTROL_CHAR,
  canonicalResourceUrl,
  checkRouteTemplate,
  isPlainObject,
  optionalString,
  checkResourceUrl,
  RESOURCE_URL_REASON,
  sanitizeIconUrl,
  sanitizeServiceName,
  sanitizeTags,
} from './sanitize.ts';

const MAX_EXTENSIONS_BYTES = 64 * 1024;
/** Longest resource.description (characters) a listing takes; longer is bazaar_description_too_long. */
export const MAX_DESCRIPTION_LENGTH = 2048;
/** Largest JSON of one accepted-terms entry, and most distinct entries per listing (bazaar_accepts_too_large). */
const MAX_TERMS_BYTES = 2048;
export const MAX_ACCEPTS_PER_LISTING = 32;
const HTTP_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const BODY_TYPES = new Set(['json', 'form-data', 'text']);
const MCP_TRANSPORTS = new Set(['streamable-http', 'sse']);
/** Cap on nodes of `info` looked at for the depth check (64 KiB cannot hold more anyway). */
const MAX_INFO_NODES = 70_000;

/** Display metadata; an absent key means "keep the previous value" on refresh. */
export interface ListingMetadata {
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  iconUrl?: string;
}

/** One accepted payment's terms, projected from the settled requirements only. */
export interface AcceptedTerms {
  scheme: string;
  network: string;
  asset: unknown;
  amount: unknown;
  payTo: string;
  maxTimeoutSeconds: unknown;
  extra?: Record<string, unknown>;
}

export interface ListingDraft {
  resource: string;
  type: 'http' | 'mcp';
  /** '' for http listings. */
  toolName: string;
  owner: string;
  x402Version: number;
  terms: AcceptedTerms;
  metadata: ListingMetadata;
  /** The echoed extension, stored under `extensions.bazaar` (an invalid routeTemplate removed). */
  bazaar: Record<string, unknown>;
  /** Parameter names and schema descriptions (never example values), for search. */
  parameterText: string;
  /** Field-level drops, for the log. */
  dropped: string[];
}

export type IngestResult =
  | { kind: 'none' }
  | { kind: 'rejected'; code: BazaarCode; reason: string }
  | { kind: 'listing'; draft: ListingDraft }
  | { kind: 'unusable'; reason: string }
  /** The seller's schema could not be validated now (svc busy, docs/CATALOG.md "Seller schemas"): no verdict, try again later. */
  | { kind: 'not_judged'; reason: string };

const reject = (code: BazaarCode, reason: string): IngestResult => ({ kind: 'rejected', code, reason });
export const OWNED_BY_OTHER_REASON =
  'The listing for this resource is owned by a different payTo; nothing was written. A listing belongs to the payTo of the first settlement that listed it (docs/CATALOG.md "Ownership and refresh"): settle to that payTo. Only the owner can withdraw it: POST /discovery/delist, signed with the key of that payTo (docs/CATALOG.md "Withdrawing a listing"); the next settlement after that lists the resource for its own payTo.';

/** bazaar_listing_owned_by_other_payee's reason, naming the owner (a public address, shown on the listing anyway). */
export function ownedByOtherReason(key: string, owner: string, payTo: string): string {
  return `The listing for ${key} is owned by payTo ${owner}, not ${payTo}; nothing was written. A listing belongs to the payTo of the first settlement that listed it (docs/CATALOG.md "Ownership and refresh"), so settlements to another payTo cannot take it over: pay ${owner} for this resource. Only the holder of ${owner}'s key can withdraw the listing (POST /discovery/delist, a message signed by that key; docs/CATALOG.md "Withdrawing a listing"); the next settlement after that lists the resource for its own payTo.`;
}

/**
 * Size in bytes of the compact JSON encoding (what the client sent), computed iteratively and
 * stopping as soon as it exceeds `limit`; a value that cannot be JSON counts as over the limit.
 */
function jsonSizeExceeds(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let bytes = 0;
  // A string's JSON is at least its length + 2 in bytes, so an over-long one is decided without encoding it.
  const stringBytes = (s: string) => (s.length + 2 > limit ? limit + 1 : Buffer.byteLength(JSON.stringify(s)));
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      bytes += 2 + Math.max(0, node.length - 1);
      if (bytes > limit) return true;
      for (const item of node) stack.push(item);
    } else if (isPlainObject(node)) {
      bytes += 1;
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        bytes += stringBytes(key) + 2; // "key": and the comma or closing brace
        if (bytes > limit) return true;
        stack.push(node[key]);
      }
      if (Object.keys(node).length === 0) bytes += 1;
    } else if (typeof node === 'string') {
      bytes += stringBytes(node);
    } else if (typeof node === 'number' || typeof node === 'boolean' || node === null) {
      bytes += JSON.stringify(node).length;
    } else {
      return true;
    }
    if (bytes > limit) return true;
  }
  return false;
}

/** Protocol invariants of the bazaar extension (upstream `validateDiscoveryExtensionSpec`, plus type checks). */
function specDefect(info: Record<string, unknown>): string | null {
  if (measureJson(info, MAX_INFO_NODES, MAX_SCHEMA_DEPTH).overflow) return `info is nested deeper than ${MAX_SCHEMA_DEPTH} levels.`;
  const input = info.input;
  if (!isPlainObject(input)) return 'info.input must be an object.';
  if (input.type === 'http') {
    const { method, bodyType } = input;
    if (method !== undefined && (typeof method !== 'string' || !HTTP_METHODS.has(method))) {
      return `info.input.method must be one of ${[...HTTP_METHODS].join(', ')}.`;
    }
    if (bodyType !== undefined) {
      if (typeof bodyType !== 'string' || !BODY_TYPES.has(bodyType))
        return `info.input.bodyType must be one of ${[...BODY_TYPES].join(', ')}.`;
      if (typeof method !== 'string' || !BODY_METHODS.has(method)) return 'info.input.bodyType is only allowed with POST, PUT or PATCH.';
    }
    return null;
  }
  if (input.type === 'mcp') {
    if (typeof input.toolName !== 'string' || input.toolName.trim() === '')
      return 'info.input.toolName must be a non-empty string for mcp.';
    // Characters as JSON Schema counts them (code points), so openapi.yaml's maxLength is the rule.
    if (input.toolName.length > 256 && [...input.toolName].length > 256) return 'info.input.toolName is longer than 256 characters.';
    // Stored and filtered as a column of its own (PostgreSQL text cannot even hold U+0000).
    if (CONTROL_CHAR.test(input.toolName)) return 'info.input.toolName must not contain control characters.';
    if (!isPlainObject(input.inputSchema)) return 'info.input.inputSchema must be an object for mcp.';
    if (input.transport !== undefined && (typeof input.transport !== 'string' || !MCP_TRANSPORTS.has(input.transport))) {
      return 'info.input.transport must be streamable-http or sse.';
    }
    return null;
  }
  return 'info.input.type must be "http" or "mcp".';
}

/** The terms of the settled requirements; anything else the requirements carry is not copied. */
function projectTerms(requirements: Record<string, unknown>): AcceptedTerms | null {
  const { scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra } = requirements;
  if (typeof scheme !== 'string' || typeof network !== 'string' || typeof payTo !== 'string' || payTo === '') return null;
  const terms: AcceptedTerms = { scheme, network, asset, amount, payTo, maxTimeoutSeconds };
  if (isPlainObject(extra) && !measureJson(extra, 200, 8).overflow) terms.extra = extra;
  return terms;
}

/**
 * The checks of the hook that need no database and no seller schema compilation, run where the
 * settlement arrives (they are iterative and bounded by the 64 KiB cap), and the envelope reduced
 * to what the catalog reads, so what crosses to the catalog worker is small and shallow (a
 * structured clone of a 5000-level object would overflow the stack). Returns the rejection, or
 * null when no bazaar extension was echoed, or the reduced envelope.
 */
export function precheckSettlement(
  paymentPayload: Record<string, unknown>,
  paymentRequirements: Record<string, unknown>,
): { kind: 'settled'; settled: { paymentPayload: Record<string, unknown>; paymentRequirements: Record<string, unknown> } } | IngestResult {
  const early = envelopeDefect(paymentPayload, paymentRequirements);
  if (early) return early;
  const bazaar = (paymentPayload.extensions as Record<string, unknown>).bazaar as Record<string, unknown>;
  const neutralized = neutralizeSchema(bazaar.schema);
  if (!neutralized.ok) return reject(neutralized.code, neutralized.reason);
  if (measureJson(bazaar, MAX_INFO_NODES, MAX_SCHEMA_DEPTH + 4).overflow)
    return reject('bazaar_spec_validation_failed', `The bazaar extension is nested deeper than ${MAX_SCHEMA_DEPTH} levels.`);
  const resource = isPlainObject(paymentPayload.resource) ? paymentPayload.resource : {};
  const shallow = (v: unknown): unknown =>
    Array.isArray(v)
      ? (v as unknown[]).slice(0, 64).map((e) => (typeof e === 'object' && e !== null ? null : e))
      : typeof v === 'object' && v !== null
        ? null
        : v;
  const reducedResource = Object.fromEntries(
    RESOURCE_FIELDS.filter((k) => Object.hasOwn(resource, k)).map((k) => [k, shallow(resource[k])]),
  );
  const { scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra } = paymentRequirements;
  return {
    kind: 'settled',
    settled: {
      paymentPayload: { x402Version: paymentPayload.x402Version, resource: reducedResource, extensions: { bazaar } },
      paymentRequirements: {
        scheme,
        network,
        asset,
        amount,
        payTo,
        maxTimeoutSeconds,
        ...(isPlainObject(extra) && !measureJson(extra, 200, 8).overflow ? { extra } : {}),
      },
    },
  };
}

/** The resource fields the catalog reads. */
const RESOURCE_FIELDS = ['url', 'description', 'mimeType', 'serviceName', 'tags', 'iconUrl'];

/** The first defect among: extensions size, bazaar shape, protocol invariants, description and terms caps. */
function envelopeDefect(paymentPayload: Record<string, unknown>, paymentRequirements: Record<string, unknown>): IngestResult | null {
  const extensions = paymentPayload.extensions;
  if (!isPlainObject(extensions) || !Object.hasOwn(extensions, 'bazaar')) return { kind: 'none' };
  if (jsonSizeExceeds(extensions, MAX_EXTENSIONS_BYTES)) {
    return reject('bazaar_extensions_too_large', `The extensions block is larger than ${MAX_EXTENSIONS_BYTES} bytes.`);
  }
  const bazaar = extensions.bazaar;
  if (!isPlainObject(bazaar) || !isPlainObject(bazaar.info) || !(isPlainObject(bazaar.schema) || typeof bazaar.schema === 'boolean')) {
    return reject('bazaar_extension_not_object', 'The bazaar extension must be an object with an `info` object and a `schema`.');
  }
  const info = bazaar.info;
  const defect = specDefect(info);
  if (defect) return reject('bazaar_spec_validation_failed', defect);
  const resource = isPlainObject(paymentPayload.resource) ? paymentPayload.resource : {};
  const input = info.input as Record<string, unknown>;
  const description = optionalString(resource.description) ?? (input.type === 'mcp' ? optionalString(input.description) : undefined);
  if (description !== undefined && description.length > MAX_DESCRIPTION_LENGTH) {
    return reject('bazaar_description_too_long', `The description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`);
  }
  const terms = projectTerms(paymentRequirements);
  if (terms && jsonSizeExceeds(terms, MAX_TERMS_BYTES)) {
    return reject('bazaar_accepts_too_large', `The accepted terms are larger than ${MAX_TERMS_BYTES} bytes of JSON.`);
  }
  return null;
}

/**
 * Why the settling payTo cannot have this listing, read before any seller schema is compiled:
 * another owner (first-settlement ownership), or a failed check of its origin still remembered
 * (ownership from the origin, ../ownership.ts); undefined when nothing stands in the way.
 */
export type StandingLookup = (
  resource: string,
  type: string,
  toolName: string,
  payTo: string,
) => { code: BazaarCode; reason: string } | undefined | Promise<{ code: BazaarCode; reason: string } | undefined>;

export async function ingestSettlement(
  paymentPayload: Record<string, unknown>,
  paymentRequirements: Record<string, unknown>,
  standing: StandingLookup,
  /** performance.now() when the hook began: the schema's wall-clock bound counts from here. */
  startedAt: number = performance.now(),
): Promise<IngestResult> {
  const early = envelopeDefect(paymentPayload, paymentRequirements);
  if (early) return early;
  const bazaar = (paymentPayload.extensions as Record<string, unknown>).bazaar as Record<string, unknown>;
  const info = bazaar.info as Record<string, unknown>;
  const resource = isPlainObject(paymentPayload.resource) ? paymentPayload.resource : {};
  const input = info.input as Record<string, unknown>;
  const type = input.type as 'http' | 'mcp';
  const description = optionalString(resource.description) ?? (type === 'mcp' ? optionalString(input.description) : undefined);
  const terms = projectTerms(paymentRequirements);

  const url = checkResourceUrl(resource.url);
  let routeTemplate: string | undefined;
  let routeTemplateDefect: string | undefined;
  if (bazaar.routeTemplate !== undefined) {
    const checked = checkRouteTemplate(bazaar.routeTemplate);
    if (checked.ok) routeTemplate = checked.template;
    else routeTemplateDefect = checked.reason;
  }
  const toolName = type === 'mcp' ? (input.toolName as string) : '';
  const canonical = url.ok ? canonicalResourceUrl(url.url, routeTemplate) : undefined;
  if (canonical !== undefined && terms) {
    const refusal = await standing(canonical, type, toolName, terms.payTo);
    if (refusal) return reject(refusal.code, refusal.reason);
  }

  const neutralized = neutralizeSchema(bazaar.schema);
  if (!neutralized.ok) return reject(neutralized.code, neutralized.reason);
  const validation = await validateAgainstSchema(neutralized.schema, info, { startedAt, scope: terms?.payTo });
  if (!validation.ok)
    return validation.code === 'not_judged'
      ? { kind: 'not_judged', reason: validation.reason }
      : reject(validation.code, validation.reason);

  if (!url.ok || canonical === undefined) return reject('bazaar_resource_url_invalid', url.ok ? RESOURCE_URL_REASON : url.reason);
  if (!terms) return { kind: 'unusable', reason: 'the settled paymentRequirements lack scheme, network or payTo' };

  const dropped: string[] = [];
  const stored: Record<string, unknown> = { ...bazaar };
  if (routeTemplateDefect !== undefined) {
    delete stored.routeTemplate;
    dropped.push(`routeTemplate: ${routeTemplateDefect}`);
  }
  const metadata: ListingMetadata = {};
  if (description !== undefined) metadata.description = description;
  const mimeType = optionalString(resource.mimeType);
  if (mimeType !== undefined) metadata.mimeType = mimeType;
  const fields: Array<[keyof ListingMetadata, unknown, (v: unknown) => unknown]> = [
    ['serviceName', resource.serviceName, sanitizeServiceName],
    ['tags', resource.tags, sanitizeTags],
    ['iconUrl', resource.iconUrl, sanitizeIconUrl],
  ];
  for (const [name, raw, sanitize] of fields) {
    if (raw === undefined) continue;
    const clean = sanitize(raw);
    if (clean === undefined) dropped.push(name);
    else (metadata as Record<string, unknown>)[name] = clean;
  }

  // The tool name is what an agent calls, so it counts as parameter text.
  const names = [
    ...(type === 'mcp' ? [input.toolName as string] : []),
    ...exampleNames(input.queryParams),
    ...exampleNames(input.pathParams),
    ...exampleNames(input.body),
  ];
  const text = [names.join(' '), parameterText([neutralized.schema, type === 'mcp' ? input.inputSchema : undefined])]
    .filter((part) => part !== '')
    .join(' ');
  const x402Version = Number.isSafeInteger(paymentPayload.x402Version) ? (paymentPayload.x402Version as number) : 2;
  return {
    kind: 'listing',
    draft: {
      resource: canonical,
      type,
      toolName,
      owner: terms.payTo,
      x402Version,
      terms,
      metadata,
      bazaar: stored,
      parameterText: text,
      dropped,
    },
  };
}
