/**
 * A closed-loop HTTP client of bench/catalog/payments-first.ts, in its own process: one keep-alive
 * connection per loopback address given, each sending the request as soon as the last answer
 * ended (after `gapMs`, when given) for `ms` milliseconds; then one JSON line: answers by status
 * class (200, 503, other), requests per second and the p50 / p95 of every answer's time in ms.
 *
 *   npx tsx bench/catalog/lib/closed-loop-client.ts '{"port":…,"ms":…,"method":"GET","path":…,"addresses":[…]}'
 */
import http from 'node:http';

interface Load {
  port: number;
  ms: number;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  addresses: string[];
  /** Connections per address (default 1). */
  perAddress?: number;
  gapMs?: number;
}

const load = JSON.parse(process.argv[2]!) as Load;
const until = performance.now() + load.ms;
const counts = { ok: 0, busy: 0, other: 0 };
const times: number[] = [];

function send(agent: http.Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: load.port,
        method: load.method,
        path: load.path,
        agent,
        headers: load.body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('error', () => resolve(0));
    req.end(load.body);
  });
}

await Promise.all(
  load.addresses.flatMap((localAddress) =>
    Array.from({ length: load.perAddress ?? 1 }, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress });
      while (performance.now() < until) {
        const started = performance.now();
        const status = await send(agent);
        times.push(performance.now() - started);
        if (status === 200) counts.ok++;
        else if (status === 503) counts.busy++;
        else counts.other++;
        if (load.gapMs) await new Promise((r) => setTimeout(r, load.gapMs));
      }
      agent.destroy();
    }),
  ),
);
times.sort((a, b) => a - b);
const pct = (p: number) => (times.length ? times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]! : NaN);
console.log(JSON.stringify({ ...counts, rps: times.length / (load.ms / 1000), p50: pct(50), p95: pct(95) }));
process.exit(0);
