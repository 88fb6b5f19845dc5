/**
 * The fetch paid_call and svc's live-402 probe (src/net/live-402.ts) reach targets with
 * (docs/MCP.md "Which targets paid_call reaches", docs/SECURITY.md "SSRF"). Every connection it
 * opens — the first request and every redirect hop —
 * goes through one connector that refuses an IP-literal host outside the public unicast ranges,
 * and resolves a name itself, refusing it when any address it resolves to is outside them. The
 * connection then goes to the address that was checked, so a name cannot resolve to a public
 * address for the check and a private one for the connection.
 */
import { lookup, type LookupAddress } from 'node:dns';
import type { Agent } from 'undici';
import { forbiddenAddressReason, forbiddenLiteralHost, type AllowList } from './private-addresses.ts';
import { PROBE_MAX_HEADER_BYTES } from './probe-config.ts';

/** A target that resolves to (or is) an address paid_call may not reach. */
export class ForbiddenTargetError extends Error {
  constructor(reason: string) {
    super(`refused to connect: ${reason} (set ALLOW_PRIVATE_TARGETS only for local development)`);
    this.name = 'ForbiddenTargetError';
  }
}

/** The ForbiddenTargetError behind a failed fetch, if that is why it failed. */
export function forbiddenCause(err: unknown): ForbiddenTargetError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ForbiddenTargetError) return e;
  }
  return undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export function guardedFetch(allow: AllowList): typeof fetch {
  const checkedLookup = (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refused = addresses.map((a) => forbiddenAddressReason(a.address, allow)).find((r) => r !== null);
      if (refused || addresses.length === 0)
        return callback(new ForbiddenTargetError(`${hostname} resolves to ${refused ?? 'no address'}`), '');
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  // undici (about a seventh of the bundle) is loaded on the first fetch, not at start-up: nothing
  // before /ready needs it (docs/OPERATIONS.md "Startup").
  let client: Promise<{ agent: Agent; undiciFetch: typeof import('undici').fetch }> | undefined;
  const load = async () => {
    // `.default`: undici is CommonJS, whose module.exports Node (and the split bundle, scripts/build.mjs) gives as the default export.
    const { Agent, buildConnector, fetch: undiciFetch } = (await import('undici')).default;
    const connectChecked = buildConnector({ lookup: checkedLookup });
    const agent = new Agent({
      maxHeaderSize: PROBE_MAX_HEADER_BYTES,
      connect: (options, callback) => {
        // IP literals are not looked up by the socket layer, so they are checked here.
        const refused = forbiddenLiteralHost(options.hostname, allow);
        if (refused) return callback(new ForbiddenTargetError(refused), null);
        return connectChecked(options, callback);
      },
    });
    return { agent, undiciFetch };
  };
  return async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const { agent, undiciFetch } = await (client ??= load());
    return undiciFetch(input as never, { ...(init as object), dispatcher: agent });
  };
}
