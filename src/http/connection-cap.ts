/**
 * How many connections svc holds (docs/OPERATIONS.md "Connection limits", docs/SECURITY.md
 * "Sockets"): a cap per client address, and a total cap kept below the process's open-file limit
 * so that svc always has descriptors left for its database, its chain RPC and an honest newcomer.
 *
 * At the total cap a newcomer is not refused: the oldest idle connection of the address holding
 * the most connections is closed to make room (slow clients sending their heads byte by byte are
 * idle: no request of theirs is being answered). A connection whose request is being answered —
 * a settle waiting on the chain above all — is never closed; when every connection is busy the
 * newcomer is closed on accept.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Descriptors kept free below the open-file limit: at least 128, else an eighth of the limit. */
export function defaultConnectionCap(descriptorLimit: number): number {
  return Math.max(1, descriptorLimit - Math.max(128, Math.floor(descriptorLimit / 8)));
}

/** Below this open-file limit svc warns at start: a few hundred slow clients could fill it. */
export const LOW_DESCRIPTOR_LIMIT = 4096;

/**
 * The soft open-file limit of this process, from /proc/self/limits (Linux); null when it cannot be
 * read (another system) and Infinity when unlimited.
 */
export function descriptorLimit(limitsFile = '/proc/self/limits'): number | null {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'utf8');
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  if (soft === 'unlimited') return Infinity;
  const n = Number(soft);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** Per connection: requests handed to the app and not yet answered. */
interface Tracked {
  address: string;
  inFlight: number;
}

/** Counts what was shed, for the rate-limited warning. */
export interface ShedCounts {
  /** Idle connections closed to admit a newcomer at the total cap. */
  evicted: number;
  /** Newcomers closed on accept: over their address's cap, or every connection busy at the total cap. */
  refused: number;
}

export class ConnectionTable {
  private readonly byAddress = new Map<string, Set<Socket>>();
  private readonly tracked = new WeakMap<Socket, Tracked>();
  private busyByAddress = new Map<string, number>();
  private open = 0;
  readonly shed: ShedCounts = { evicted: 0, refused: 0 };

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerAddress: number,
  ) {}

  get size(): number {
    return this.open;
  }

  /** Admits a new connection, closing an idle one if the total cap requires it; false when the newcomer is closed. */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress ?? 'unknown';
    const own = this.byAddress.get(address)?.size ?? 0;
    if (own + 1 > this.maxPerAddress || (this.open >= this.maxTotal && !this.evictFor(address))) {
      this.shed.refused++;
      socket.destroy();
      return false;
    }
    let sockets = this.byAddress.get(address);
    if (!sockets) this.byAddress.set(address, (sockets = new Set()));
    sockets.add(socket);
    this.tracked.set(socket, { address, inFlight: 0 });
    this.open++;
    socket.once('close', () => this.forget(socket));
    return true;
  }

  /** A request on this connection was handed to the app: it is busy until the response is done. */
  requestStarted(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.tracked.get(req.socket);
    if (!entry) return;
    if (entry.inFlight++ === 0) this.busyByAddress.set(entry.address, (this.busyByAddress.get(entry.address) ?? 0) + 1);
    let done = false;
    res.once('close', () => {
      if (done) return;
      done = true;
      if (--entry.inFlight === 0) this.unbusy(entry.address);
    });
  }

  /**
   * Closes the oldest idle connection of the address holding the most connections (the
   * newcomer's address counted with the newcomer), among addresses that have an idle one.
   */
  private evictFor(newcomer: string): boolean {
    let victim: string | undefined;
    let most = 0;
    for (const [address, sockets] of this.byAddress) {
      const idle = sockets.size - (this.busyByAddress.get(address) ?? 0);
      const count = sockets.size + (address === newcomer ? 1 : 0);
      if (idle > 0 && count > most) {
        most = count;
        victim = address;
      }
    }
    if (victim === undefined) return false;
    for (const socket of this.byAddress.get(victim)!) {
      if (this.tracked.get(socket)!.inFlight > 0) continue;
      this.forget(socket);
      socket.destroy();
      this.shed.evicted++;
      return true;
    }
    return false;
  }

  private forget(socket: Socket): void {
    const entry = this.tracked.get(socket);
    if (!entry) return;
    this.tracked.delete(socket);
    const sockets = this.byAddress.get(entry.address)!;
    sockets.delete(socket);
    if (sockets.size === 0) this.byAddress.delete(entry.address);
    if (entry.inFlight > 0) {
      // Its response's 'close' still comes and must not count it twice.
      entry.inFlight = -Infinity;
      this.unbusy(entry.address);
    }
    this.open--;
  }

  private unbusy(address: string): void {
    const busy = (this.busyByAddress.get(address) ?? 1) - 1;
    if (busy <= 0) this.busyByAddress.delete(address);
    else this.busyByAddress.set(address, busy);
  }
}

/** How often at most the shedding is logged: a flood sheds on every accept. */
const SHED_LOG_INTERVAL_MS = 60_000;

/** Who hears of the caps: `warn`, at most once a minute, how many connections were shed; `watch`, the table (metrics). */
export interface ConnectionObservers {
  warn?: (fields: Record<string, unknown>, message: string) => void;
  watch?: (table: ConnectionTable) => void;
}

/** Applies both caps to a server. */
export function capConnections(
  server: Server,
  maxTotal: number,
  maxPerAddress: number,
  { warn, watch }: ConnectionObservers = {},
): ConnectionTable {
  const table = new ConnectionTable(maxTotal, maxPerAddress);
  watch?.(table);
  let logged: ShedCounts = { evicted: 0, refused: 0 };
  let lastLog = 0;
  server.on('connection', (socket: Socket) => {
    table.admit(socket);
    const { evicted, refused } = table.shed;
    if (warn && (evicted !== logged.evicted || refused !== logged.refused) && Date.now() - lastLog >= SHED_LOG_INTERVAL_MS) {
      warn(
        { evicted: evicted - logged.evicted, refused: refused - logged.refused, open: table.size, maxConnections: maxTotal },
        'connection caps reached: idle connections of the busiest addresses closed, or newcomers refused',
      );
      logged = { evicted, refused };
      lastLog = Date.now();
    }
  });
  // Before Koa's listener, so the connection counts as busy from the first moment of its request.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => table.requestStarted(req, res));
  return table;
}
