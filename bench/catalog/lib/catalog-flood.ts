/**
 * The discovery flood of bench/catalog/catalog.ts's mixed run, as its own client process (another client
 * than the one measuring /verify, as on a real network): `connections` keep-alive loops of
 * GET /discovery/search, alternating the given queries, then one JSON line with the counts.
 *
 *   npx tsx bench/catalog/lib/catalog-flood.ts PORT CONNECTIONS MS QUERY [QUERY…]
 *
 * With MS = 0 the flood is driven from stdin instead: it searches while switched on (a line
 * `on`), idles while switched off (`off`, the state it starts in), and prints its counts and exits
 * on `stop`; only the searches answered while on are counted.
 */
import { createInterface } from 'node:readline';
import { request } from '../../lib/http-load.ts';

const [port, connections, ms, ...queries] = process.argv.slice(2);
const counts = { searches: 0, busy: 0, other: 0 };
const controlled = Number(ms) === 0;
const until = controlled ? Number.POSITIVE_INFINITY : performance.now() + Number(ms);
let on = !controlled;
let stopped = false;
let wake: () => void = () => undefined;
let switched = new Promise<void>((resolve) => (wake = resolve));

if (controlled)
  createInterface({ input: process.stdin }).on('line', (line) => {
    on = line.trim() === 'on';
    stopped = line.trim() === 'stop';
    wake();
    switched = new Promise<void>((resolve) => (wake = resolve));
  });

const search = async (query: string) =>
  (await request(Number(port), 'GET', `/discovery/search?query=${encodeURIComponent(query)}&limit=20`)).status;

await Promise.all(
  Array.from({ length: Number(connections) }, async (_, k) => {
    while (!stopped && performance.now() < until) {
      if (!on) {
        await switched;
        continue;
      }
      const status = await search(queries[k % queries.length]!);
      if (!on) continue;
      if (status === 200) counts.searches++;
      else if (status === 503) counts.busy++;
      else counts.other++;
    }
  }),
);
console.log(JSON.stringify(counts));
process.exit(0);
