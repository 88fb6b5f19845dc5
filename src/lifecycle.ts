/**
 * Graceful shutdown (docs/OPERATIONS.md). On SIGTERM/SIGINT: `draining` becomes true (readiness
 * reads it), the listener stops accepting connections, idle keep-alive connections are closed
 * and every response in flight is sent with `Connection: close`; once the in-flight settles have
 * been answered (bounded by their transactions' time bounds, and by `timeoutMs`) the process
 * exits 0. A second signal exits at once (128 + signal number, the shell convention), unless it
 * comes within RELAY_WINDOW_MS of the first: that one is the first signal relayed.
 */
import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** Read by readiness: true from the first shutdown signal on. */
export const lifecycle = { draining: false };

export interface DrainOptions {
  server: Server;
  /** Resolves when no settle is in flight. */
  idle: () => Promise<void>;
  timeoutMs: number;
  /** Runs after the last response (close stores, stop loops). */
  cleanup: () => Promise<void> | void;
  log: (obj: Record<string, unknown>, msg: string) => void;
  /** Called at the first signal (e.g. readiness starts reporting `draining`). */
  onDraining?: () => void;
  exit?: (code: number) => never;
  /** Set by installDrain: closes keep-alive connections idle after a response. */
  closeIdle?: () => void;
}

const SIGNAL_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * A signal sent to a whole process group (`kill -- -PGID`, a terminal's Ctrl-C, some supervisors)
 * reaches svc twice when `npm start` runs it: once from the kernel and once relayed by npm, which
 * forwards SIGTERM and SIGINT to its script. A signal this soon after the first is taken as that
 * relay and the drain goes on; a second signal later than this is an operator's and exits at once.
 * The two copies arrive within milliseconds (more on a loaded machine), and no one signals twice
 * on purpose within a second.
 */
export const RELAY_WINDOW_MS = 1_000;

export function installDrain(options: DrainOptions): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const { server } = options;
  // Per connection: requests in progress and whether it has served one. Node's own
  // closeIdleConnections would also reset a connection whose first request is still in flight
  // on the wire, so the drain closes only connections that are idle after a response.
  const connections = new Map<Socket, { active: number; served: boolean }>();
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { active: 0, served: false });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req, res) => {
    const state = connections.get(req.socket);
    if (state) {
      state.active++;
      state.served = true;
      res.once('close', () => state.active--);
    }
    if (lifecycle.draining) res.setHeader('Connection', 'close');
  });
  options.closeIdle = () => {
    for (const [socket, state] of connections) if (state.served && state.active === 0) socket.destroy();
  };
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (lifecycle.draining) {
      const sinceFirstMs = Math.round(performance.now() - firstSignalAt);
      if (sinceFirstMs < RELAY_WINDOW_MS) {
        options.log(
          { signal, sinceFirstMs },
          `signal within ${RELAY_WINDOW_MS} ms of the first: taken as the first one relayed; still draining`,
        );
        return;
      }
      options.log({ signal, sinceFirstMs }, 'second signal: exiting at once');
      exit(SIGNAL_CODES[signal] ?? 1);
    }
    firstSignalAt = performance.now();
    lifecycle.draining = true;
    options.onDraining?.();
    options.log({ signal }, 'draining: no new connections; waiting for settles in flight');
    void drain(options, exit);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

async function drain({ server, idle, timeoutMs, cleanup, log, closeIdle }: DrainOptions, exit: (code: number) => never): Promise<void> {
  // The net-level close stops listening and waits for the connections (the HTTP-level close
  // would first reset every connection without a parsed request).
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const sweep = setInterval(() => closeIdle?.(), 50);
  closeIdle?.();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const result = await Promise.race([
    idle()
      .then(() => closed)
      .then(() => 'drained' as const),
    deadline,
  ]);
  clearInterval(sweep);
  clearTimeout(timer);
  if (result === 'timeout') {
    log({ timeoutMs }, 'drain timed out; closing the remaining connections');
    server.closeAllConnections();
  }
  try {
    await cleanup();
  } catch (err) {
    log({ err: String(err) }, 'cleanup after drain failed');
  }
  log({ result }, 'svc stopped');
  exit(0);
}
