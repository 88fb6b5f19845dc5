/**
 * The HTTP side of the catalog benchmarks (bench/catalog/catalog.ts, bench/catalog/catalog-postgres.ts): a
 * keep-alive client, a closed-loop load generator with percentiles, a process's RSS, and the
 * machine line every result starts with. Servers run in their own processes; this is the client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { ensureBuilt } from '../../test/helpers/build.ts';

/**
 * dist/ built from the current sources, built again when older than them: the benches measure what `npm start` runs,
 * and a dist/ left by another build (a test run rebuilds it from whatever src/ held then) would be measured in its place.
 */
export function requireBuild(): void {
  ensureBuilt();
}

/** Starts `node <args>` with the environment extended by `env`; stderr is shown, stdin piped when asked. */
export function startNode(args: string[], env: Record<string, string>, options: { stdin?: boolean } = {}): ChildProcess {
  return spawn(process.execPath, args, { stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
}

/**
 * svc as `npm start` runs it: scripts/start.sh in `cwd` (its Node flags and MALLOC_ARENA_MAX=2,
 * docs/BENCHMARKS.md "svc memory and its Node flags"), the environment extended by `env`. The shell
 * execs node, so the child's pid is svc's.
 */
export function startNpmStart(env: Record<string, string>, cwd = '.'): ChildProcess {
  return spawn('sh', ['scripts/start.sh'], { cwd, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
}

const agentFor = new Map<number, http.Agent>();
export function request(port: number, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  let agent = agentFor.get(port);
  if (!agent) agentFor.set(port, (agent = new http.Agent({ keepAlive: true, maxSockets: 64 })));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const getJson = async <T>(port: number, path: string): Promise<T> => JSON.parse((await request(port, 'GET', path)).text) as T;

/** Resolves once `path` answers below 500 (120 s at most: svc migrating a copied catalog on a loaded machine takes a while). */
export async function waitReady(port: number, path: string): Promise<void> {
  let last = 'nothing (not listening)';
  for (let i = 0; i < 1200; i++) {
    try {
      const answer = await request(port, 'GET', path);
      if (answer.status < 500) return;
      last = `${answer.status} ${answer.text.slice(0, 300)}`;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} never answered ${path} below 500 in 120 s; its last answer: ${last}`);
}

export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** `total` GET requests over `conns` connections; latencies in ms; errors: non-200 answers and failed requests. */
export async function load(
  port: number,
  conns: number,
  total: number,
  path: (i: number) => string,
): Promise<{ p50: number; p95: number; errors: number }> {
  const times: number[] = [];
  let next = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        // A connection the server closed (say, an idle keep-alive socket reused as it closed) is
        // counted as an error, not a crash of the whole bench; the row reports it.
        const status = await request(port, 'GET', path(i)).then(
          (r) => r.status,
          (err: Error) => (console.error(`port ${port}: ${err.message}`), 0),
        );
        if (status === 0) {
          errors++;
          continue;
        }
        times.push(performance.now() - started);
        if (status !== 200) errors++;
      }
    }),
  );
  return { p50: pct(times, 50), p95: pct(times, 95), errors };
}

/** A process's resident size now (VmRSS), or its peak so far (VmHWM, the kernel's high-water mark), in MiB. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) a process, or one of its threads (`/proc/PID/task/TID`), has used so far. */
export function cpuSeconds(pid: number, tid?: number): number {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, clock ticks of 1/100 s
}

/** CPU seconds of a process's main thread and of all its other threads (workers, libuv, V8's). */
export function threadCpuSeconds(pid: number): { main: number; others: number } {
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    if (tid === pid) continue;
    try {
      others += cpuSeconds(pid, tid);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return { main: cpuSeconds(pid, pid), others };
}

export const fmt = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

export const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export function machineLine(): string {
  return `Machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}; load average at start ${loadAverage()}.`;
}
