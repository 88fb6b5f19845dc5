/**
 * How long `npm run dev` takes from typing it to the end of its story.
 *
 * How long `npm run dev` takes a newcomer (goal: the full story within a minute of typing it).
 * Runs `src/dev/main.ts --once --ephemeral` N times as a child process (the same command, this
 * Node), timing from spawn to "ready" (every service up), the story, and the whole run. Baseline,
 * side by side: spawning the same Node with the tsx loader on an empty program (the fixed cost of
 * any `npm run` script here). Results go to stdout as a markdown table.
 *
 *   npx tsx bench/ops/dev.ts [--runs 3]
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, quick: { type: 'boolean', default: false } } });
// --quick: one run; the story itself is what is measured and is not shortened (bench/lib/quick.ts).
if (values.quick) values.runs = '1';
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');

interface Run {
  readyMs: number;
  totalMs: number;
  storyMs: number;
}

function timeProcess(args: string[], onLine?: (line: string, elapsedMs: number) => void): Promise<{ ms: number; code: number | null }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FORCE_COLOR: '0' } });
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) onLine?.(line, performance.now() - started);
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ ms: performance.now() - started, code })));
}

async function devOnce(): Promise<Run> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-dev-'));
  let readyMs = NaN;
  let storyMs = NaN;
  try {
    const { ms, code } = await timeProcess(
      ['--import', 'tsx', 'src/dev/main.ts', '--once', '--ephemeral', '--data-dir', dataDir],
      (line, at) => {
        if (/\] ready: /.test(line)) readyMs = at;
        const m = line.match(/^Story complete in ([\d.]+)s/);
        if (m) storyMs = at - readyMs;
      },
    );
    if (code !== 0) throw new Error(`npm run dev --once exited ${code}`);
    return { readyMs, totalMs: ms, storyMs };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const baseline: number[] = [];
const dev: Run[] = [];
for (let i = 0; i < runs; i++) {
  baseline.push((await timeProcess(['--import', 'tsx', '-e', '0'])).ms);
  dev.push(await devOnce());
  process.stderr.write(`run ${i + 1}/${runs}: ready ${s(dev[i]!.readyMs)}, total ${s(dev[i]!.totalMs)}\n`);
}

const base = median(baseline);
const ready = median(dev.map((r) => r.readyMs));
const story = median(dev.map((r) => r.storyMs));
const total = median(dev.map((r) => r.totalMs));
console.log(
  `Machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.versions.node}. Run: \`npx tsx bench/ops/dev.ts --runs ${runs}\` (${new Date().toISOString()}), medians of ${runs}.\n`,
);
console.log('| Measure | Time | vs baseline (tsx empty program) | vs the 60 s goal |');
console.log('|---|---|---|---|');
console.log(`| baseline: node + tsx, empty program | ${s(base)} | 1.00× | |`);
console.log(
  `| npm run dev: spawn → every service ready | ${s(ready)} | ${(ready / base).toFixed(1)}× | ${((ready / 60_000) * 100).toFixed(0)} % |`,
);
console.log(
  `| the story (2 buyer payments, catalog, search, agent: 2 payments over MCP) | ${s(story)} | ${(story / base).toFixed(1)}× | ${((story / 60_000) * 100).toFixed(0)} % |`,
);
console.log(
  `| npm run dev -- --once, whole run | ${s(total)} | ${(total / base).toFixed(1)}× | ${((total / 60_000) * 100).toFixed(0)} % |`,
);
