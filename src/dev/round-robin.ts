/**
 * The round-robin front of `npm run dev -- --postgres` (docs/SCALING.md): a plain HTTP relay on
 * svc's usual port that sends each request to the next svc instance in turn, as a load balancer
 * in front of a fleet would. It counts what each instance answered, so the demo can show the
 * requests were spread. Development only: no health checks, no retries.
 */
import { createServer, request } from 'node:http';
import type { RunningServer } from '../http/app.ts';

export interface RoundRobinFront extends RunningServer {
  /** Requests relayed to each target, in target order. */
  readonly served: number[];
}

export function startRoundRobin(targets: string[], port: number): Promise<RoundRobinFront> {
  const served = targets.map(() => 0);
  let next = 0;
  const server = createServer((req, res) => {
    const index = next;
    next = (next + 1) % targets.length;
    served[index]!++;
    const target = new URL(req.url ?? '/', targets[index]);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('svc instance unreachable\n');
    });
    req.pipe(upstream);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      resolve({
        server,
        served,
        port: bound,
        url: `http://127.0.0.1:${bound}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
