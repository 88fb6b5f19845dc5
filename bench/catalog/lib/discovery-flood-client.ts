/**
 * The flooding clients of bench/catalog/discovery-flood.ts, in their own process: one keep-alive
 * connection per loopback address given, each sending GET PATH in a closed loop for MS
 * milliseconds; then one JSON line with the counts (200, 503 svc_catalog_busy, other).
 *
 *   npx tsx bench/catalog/lib/discovery-flood-client.ts PORT MS PATH ADDRESS [ADDRESS…]
 */
import http from 'node:http';

const [port, ms, path, ...addresses] = process.argv.slice(2);
const until = performance.now() + Number(ms);
const counts = { ok: 0, busy: 0, other: 0 };

function get(agent: http.Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: Number(port), path, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', () => resolve(0));
    req.end();
  });
}

await Promise.all(
  addresses.map(async (localAddress) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress });
    while (performance.now() < until) {
      const status = await get(agent);
      if (status === 200) counts.ok++;
      else if (status === 503) counts.busy++;
      else counts.other++;
    }
    agent.destroy();
  }),
);
console.log(JSON.stringify(counts));
process.exit(0);
