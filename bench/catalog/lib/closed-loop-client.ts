/**
 * A closed-loop HTTP client of bench/catalog/payments-first.ts, in its own process, driven from
 * stdin: one keep-alive connection per loopback address given (`perAddress` each), each sending the
 * request as soon as the last answer ended (after `gapMs`, when given).
 *
 * - `on` / `off`: load (a flood) until switched off, then one JSON line: its answers by status and seconds;
 * - `measure MS`: load for MS milliseconds, then one JSON line: answers by status (200, 503,
 *   other), requests per second and the p50 / p95 of every answer's time in ms;
 * - `stop`: exit.
 *
 *   npx tsx bench/catalog/lib/closed-loop-client.ts '{"port":…,"method":"GET","path":…,"addresses":[…]}'
 */
import http from 'node:http';
import { createInterface } from 'node:readline';

interface Load {
  port: number;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  addresses: string[];
  perAddress?: number;
  gapMs?: number;
}

const load = JSON.parse(process.argv[2]!) as Load;
const agents = load.addresses.flatMap((localAddress) =>
  Array.from({ length: load.perAddress ?? 1 }, () => new http.Agent({ keepAlive: true, maxSockets: 1, localAddress })),
);

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

/** Runs every connection's loop while `going()`; the answers' statuses and times. */
async function run(going: () => boolean) {
  const counts = { ok: 0, busy: 0, other: 0 };
  const times: number[] = [];
  await Promise.all(
    agents.map(async (agent) => {
      while (going()) {
        const started = performance.now();
        const status = await send(agent);
        times.push(performance.now() - started);
        if (status === 200) counts.ok++;
        else if (status === 503) counts.busy++;
        else counts.other++;
        if (load.gapMs) await new Promise((r) => setTimeout(r, load.gapMs));
      }
    }),
  );
  return { counts, times };
}

let flooding = false;
let flood: ReturnType<typeof run> | undefined;
let floodStarted = 0;
for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.trim().split(' ');
  if (command === 'on' && !flooding) {
    flooding = true;
    floodStarted = performance.now();
    flood = run(() => flooding);
  } else if (command === 'off' && flood) {
    flooding = false;
    const { counts } = await flood;
    console.log(JSON.stringify({ ...counts, seconds: (performance.now() - floodStarted) / 1000 }));
  } else if (command === 'measure') {
    const started = performance.now();
    const until = started + Number(arg);
    const { counts, times } = await run(() => performance.now() < until);
    const seconds = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    const pct = (p: number) => (times.length ? times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]! : NaN);
    console.log(JSON.stringify({ ...counts, seconds, rps: times.length / seconds, p50: pct(50), p95: pct(95), times }));
  } else if (command === 'stop') break;
}
for (const agent of agents) agent.destroy();
process.exit(0);
