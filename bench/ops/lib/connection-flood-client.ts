/**
 * The slow clients of bench/ops/connection-flood.ts, in their own process (their descriptors are not
 * svc's): PER connections from each loopback address given, each sending half a request head and
 * then one more header line every 2 s, never finishing it; a connection the server closes is
 * opened again 100 ms later. After MS milliseconds, one JSON line: connections opened, and closed
 * by the server.
 *
 *   npx tsx bench/ops/lib/connection-flood-client.ts PORT MS PER ADDRESS [ADDRESS…]
 */
import { connect, type Socket } from 'node:net';

const [port, ms, per, ...addresses] = process.argv.slice(2);
const until = performance.now() + Number(ms);
const counts = { opened: 0, closedByServer: 0, failed: 0 };
const open = new Set<Socket>();

function slow(localAddress: string): void {
  if (performance.now() >= until) return;
  const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress });
  let trickle: NodeJS.Timeout | undefined;
  socket.once('connect', () => {
    counts.opened++;
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    trickle = setInterval(() => socket.write('X-Slow: 1\r\n'), 2_000);
  });
  socket.on('data', () => undefined);
  socket.once('error', () => counts.failed++);
  socket.once('close', () => {
    clearInterval(trickle);
    open.delete(socket);
    if (performance.now() < until) {
      counts.closedByServer++;
      setTimeout(() => slow(localAddress), 100);
    }
  });
  open.add(socket);
}

for (const address of addresses) for (let i = 0; i < Number(per); i++) slow(address);
await new Promise((r) => setTimeout(r, Math.max(0, until - performance.now())));
for (const socket of open) socket.destroy();
console.log(JSON.stringify(counts));
process.exit(0);
