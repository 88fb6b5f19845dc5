/**
 * The HTTP transport under `rpc.Server`'s JSON-RPC calls: node:http(s) with a keep-alive Agent,
 * in place of the SDK's fetch client. Every verify makes one simulateTransaction round trip, and
 * fetch's request/response objects and web streams cost svc more CPU per call than the payment
 * logic itself (docs/BENCHMARKS.md "Verify and cheap requests against their floors"). It keeps
 * what the SDK relies on: `post(url, body)` answering `{ data, status, headers }`, an error named
 * "Request failed with status code N" for an HTTP error, a timeout from `defaults.timeout`, and a
 * bounded response size. Anything unusual (a redirect) goes to the SDK's own client unchanged.
 *
 * A kept-alive connection the server closes as idle can be picked for the next call at the moment
 * the close is on its way: that call fails with a reset before the server read it. Such a call is
 * sent again on another connection (node:http's `reusedSocket`), as browsers and undici do. It is
 * safe for every Stellar RPC method: reads repeat, and a repeated sendTransaction carries the same
 * signed envelope (same hash, applied at most once).
 */
import http from 'node:http';
import https from 'node:https';

/** The part of the SDK's HTTP client that rpc.Server's JSON-RPC calls use. */
export interface PostClient {
  defaults: { timeout?: number };
  post(url: string, data?: unknown, config?: unknown): Promise<{ data: unknown; status: number; headers: Record<string, unknown> }>;
}

/** Larger answers are refused rather than buffered (a simulation answer is a few KB). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** How a write to, or a read from, a connection the server has already closed fails. */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);

export function keepAliveClient(fallback: PostClient, timeoutMs: number): PostClient {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  };
  const client: PostClient = {
    defaults: { timeout: timeoutMs },
    post(url, data, config) {
      const target = new URL(url);
      const protocol = target.protocol as keyof typeof agents;
      if (!(protocol in agents)) return fallback.post(url, data, config);
      const body = Buffer.from(typeof data === 'string' ? data : JSON.stringify(data ?? null));
      const timeout = client.defaults.timeout ?? timeoutMs;
      const attempt = (resolve: (value: Awaited<ReturnType<PostClient['post']>>) => void, reject: (err: unknown) => void) => {
        let answered = false;
        const request = (protocol === 'https:' ? https : http).request(
          target,
          {
            method: 'POST',
            agent: agents[protocol],
            headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': body.length },
            timeout,
          },
          (response) => {
            answered = true;
            const status = response.statusCode ?? 0;
            if (status >= 300 && status < 400) {
              response.resume();
              fallback.post(url, data, config).then(resolve, reject);
              return;
            }
            const chunks: Buffer[] = [];
            let size = 0;
            response.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > MAX_RESPONSE_BYTES) {
                request.destroy(new Error(`maxContentLength size of ${MAX_RESPONSE_BYTES} exceeded`));
                return;
              }
              chunks.push(chunk);
            });
            response.on('error', reject);
            response.on('end', () => {
              if (status < 200 || status >= 300) return reject(new Error(`Request failed with status code ${status}`));
              const text = Buffer.concat(chunks).toString('utf8');
              try {
                resolve({ data: text === '' ? undefined : JSON.parse(text), status, headers: response.headers });
              } catch {
                reject(new Error(`the RPC answered invalid JSON (${text.slice(0, 80)})`));
              }
            });
          },
        );
        request.on('timeout', () => request.destroy(new Error(`timeout of ${timeout}ms exceeded`)));
        request.on('error', (err: NodeJS.ErrnoException) => {
          // Each retry takes another pooled connection or a new one, so this ends.
          if (!answered && request.reusedSocket && STALE_CONNECTION_CODES.has(err.code ?? '')) attempt(resolve, reject);
          else reject(err);
        });
        request.end(body);
      };
      return new Promise(attempt);
    },
  };
  return client;
}
