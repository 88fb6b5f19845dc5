/**
 * The closed-loop load of bench/facilitator/verify-floor.ts and bench/facilitator/verify-profile.ts: keep-alive HTTP
 * connections each sending the next request as soon as the last answer ended.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';

export interface Target {
  port: number;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** Requests per second of a closed loop of `conns` connections for `seconds`; `bad` counts answers ≥ 500. */
export async function rate(t: Target, conns: number, seconds: number): Promise<{ rps: number; bad: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: conns });
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let bad = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: t.port,
          method: t.method,
          path: t.path,
          agent,
          headers: t.body ? { 'content-type': 'application/json' } : {},
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 500) bad++;
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(t.body);
    });
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (performance.now() < end) {
        await one();
        done++;
      }
    }),
  );
  agent.destroy();
  return { rps: done / seconds, bad };
}

/**
 * Resolves once svc on `port` answers GET /health with 200 (a minute at most). Rejects at once when
 * `child` exits first (a refused start: its reason is on the inherited stderr), instead of waiting out
 * the minute.
 */
export async function ready(port: number, child: ChildProcess): Promise<void> {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  for (let i = 0; i < 600 && !exited(); i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (exited()) throw new Error(`svc for port ${port} exited (${child.exitCode ?? child.signalCode}) before it became healthy`);
  throw new Error(`svc on ${port} never became healthy`);
}
