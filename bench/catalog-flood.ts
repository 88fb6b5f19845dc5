/**
 * The discovery flood of bench/catalog.ts's mixed run, as its own client process (another client
 * than the one measuring /verify, as on a real network): `connections` keep-alive loops of
 * GET /discovery/search for `ms` milliseconds, alternating the given queries, then one JSON line
 * with the counts.
 *
 *   npx tsx bench/catalog-flood.ts PORT CONNECTIONS MS QUERY [QUERY…]
 */
import { request } from './http-load.ts';

const [port, connections, ms, ...queries] = process.argv.slice(2);
const until = performance.now() + Number(ms);
const counts = { searches: 0, busy: 0, other: 0 };

const search = async (query: string) =>
  (await request(Number(port), 'GET', `/discovery/search?query=${encodeURIComponent(query)}&limit=20`)).status;

await Promise.all(
  Array.from({ length: Number(connections) }, async (_, k) => {
    while (performance.now() < until) {
      const status = await search(queries[k % queries.length]!);
      if (status === 200) counts.searches++;
      else if (status === 503) counts.busy++;
      else counts.other++;
    }
  }),
);
console.log(JSON.stringify(counts));
