/**
 * Start of the scripts a newcomer waits on: `npm run mcp` and docs/SELLER.md's seller, from the build and through tsx.
 *
 *   npm run build && npm run bench -- script-start [--runs 5] [--quick]
 *
 * Each run spawns the command as a user types it and times spawn → its first useful output: the agent tool server
 * (`npm run --silent mcp`, src/mcp/main.ts) → its answer to one `initialize` line written to its stdin, what a desktop
 * MCP client waits for on every launch; docs/SELLER.md's `scratch/my-seller.ts` (the page's block, written to
 * scratch/ as the page says) → its `seller ready` line, by `npm run --silent ts --` (scripts/run-ts.mjs: from the build
 * when it is current) and by `npx tsx`. The ways alternate run by run; the first run of each is not counted (it fills
 * Node's compile cache). Wall time, so the load average is printed beside it.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { loadAverage, machineLine, pct, requireBuild } from '../lib/http-load.ts';
import { ROOT } from '../lib/ops-procs.ts';
import { QUICK } from '../lib/quick.ts';

const runsArg = process.argv.indexOf('--runs');
const RUNS = QUICK ? 1 : Number(runsArg > 0 ? process.argv[runsArg + 1] : 5);
requireBuild();

/** docs/SELLER.md's seller, the block after its `<!-- scratch/my-seller.ts -->` marker. */
const page = readFileSync(join(ROOT, 'docs/SELLER.md'), 'utf8');
const block = /<!-- scratch\/my-seller\.ts -->\s*```ts\n([\s\S]*?)```/.exec(page);
if (!block) throw new Error('docs/SELLER.md has no scratch/my-seller.ts block');
const sellerFile = join(ROOT, 'scratch', `bench-start-seller-${process.pid}.ts`);
writeFileSync(sellerFile, block[1]!);

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
})}\n`;

interface Way {
  name: string;
  command: string[];
  /** Written to stdin at spawn. */
  input?: string;
  /** Whether the output so far holds the line the run waits for. */
  ready: (out: string) => boolean;
}
const ways: Way[] = [
  {
    name: '`npm run mcp` → initialize answered',
    command: ['npm', 'run', '--silent', 'mcp'],
    input: INITIALIZE,
    ready: (o) => o.includes('"id":1'),
  },
  {
    name: 'seller, `npm run ts --` → seller ready',
    command: ['npm', 'run', '--silent', 'ts', '--', sellerFile],
    ready: (o) => o.includes('seller ready'),
  },
  { name: 'seller, `npx tsx` → seller ready', command: ['npx', 'tsx', sellerFile], ready: (o) => o.includes('seller ready') },
];

/** Milliseconds from spawn to `way`'s ready output; the process group is then stopped. */
function timeOnce(way: Way): Promise<number> {
  const env = { ...process.env, FACILITATOR_URL: 'http://127.0.0.1:9', PAY_TO: Keypair.random().publicKey() };
  const started = performance.now();
  const child = spawn(way.command[0]!, way.command.slice(1), { cwd: ROOT, env, detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
  if (way.input) child.stdin.write(way.input);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => done(new Error(`${way.name}: nothing ready in 60 s; output: ${out.slice(0, 500)}`)), 60_000);
    const done = (err?: Error) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      if (err) reject(err);
      else resolve(performance.now() - started);
    };
    child.stdout.on('data', (chunk) => {
      out += String(chunk);
      if (way.ready(out)) done();
    });
    child.on('exit', (code) => {
      if (!way.ready(out)) done(new Error(`${way.name}: exited ${code} before it was ready; output: ${out.slice(0, 500)}`));
    });
  });
}

console.log(machineLine());
const times = new Map<Way, number[]>(ways.map((way) => [way, []]));
try {
  for (let run = 0; run <= RUNS; run++)
    for (const way of ways) {
      const ms = await timeOnce(way);
      if (run > 0) times.get(way)!.push(ms);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
} finally {
  rmSync(sellerFile, { force: true });
}
console.log(`\n| start, ${RUNS} runs | p50 / max ms |\n| --- | --- |`);
for (const [way, ms] of times) console.log(`| ${way.name} | ${pct(ms, 50).toFixed(0)} / ${Math.max(...ms).toFixed(0)} |`);
console.log(`\nLoad average after: ${loadAverage()}.`);
