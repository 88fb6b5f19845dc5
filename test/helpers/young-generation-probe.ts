/**
 * Preloaded (`--import`, which Node runs in every worker thread too) into the svc that
 * test/ops/start.test.ts starts, to read each V8 isolate's young-generation size from inside it,
 * written to YOUNG_GENERATION_DIR/<threadId>.json with the thread's role:
 * - a worker thread, as it boots (its heap is sized by then): what its heap limit reserves beyond
 *   the old generation its resourceLimits name (`youngMiB`; V8 reserves three semi-spaces, two
 *   for the new space and one for new large objects);
 * - the main thread, on SIGUSR2 (so the test can ask once svc's catalog threads have started):
 *   the largest semi-space capacity it reaches while allocating short-lived objects, some kept a
 *   while so that they survive scavenges and V8 grows the new space to its limit
 *   (`semiSpaceMiB`), and its heap limit (`heapLimitMiB`: the old generation's limit, which V8
 *   otherwise sizes from the machine, and three semi-spaces).
 * Does nothing without YOUNG_GENERATION_DIR; never part of svc.
 */
import { renameSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import { isMainThread, resourceLimits, threadId, workerData } from 'node:worker_threads';

const dir = process.env.YOUNG_GENERATION_DIR;
const MiB = 2 ** 20;

function write(figures: object): void {
  writeFileSync(`${dir}/${threadId}.tmp`, JSON.stringify(figures));
  renameSync(`${dir}/${threadId}.tmp`, `${dir}/${threadId}.json`);
}

function largestSemiSpace(): number {
  const semiSpace = () => {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!;
    return space.space_used_size + space.space_available_size;
  };
  let largest = semiSpace();
  const kept: unknown[] = new Array(20_000);
  for (let i = 0; i < 200_000; i++) {
    kept[i % kept.length] = { i, text: `object ${i}` };
    if (i % 5_000 === 0) largest = Math.max(largest, semiSpace());
  }
  return largest / MiB;
}

if (dir) {
  if (isMainThread)
    process.on('SIGUSR2', () =>
      write({ role: 'main', semiSpaceMiB: largestSemiSpace(), heapLimitMiB: v8.getHeapStatistics().heap_size_limit / MiB }),
    );
  else
    write({
      role: String((workerData as { role?: string } | null)?.role ?? 'worker'),
      youngMiB: v8.getHeapStatistics().heap_size_limit / MiB - resourceLimits.maxOldGenerationSizeMb!,
    });
}
