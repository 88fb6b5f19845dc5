/**
 * Preloaded into an svc process by bench/catalog/catalog-rss.ts (`--import`, which Node also runs in every
 * worker thread; the bench strips its types first, see there): each thread writes its V8 heap's
 * figures, now and the highest seen, to THREAD_HEAP_DIR/<pid>-<threadId>.json every 250 ms, so
 * the bench can tell the main thread's heap from each catalog thread's (each is an isolate of its
 * own) and from the rest of the RSS. Does nothing without THREAD_HEAP_DIR; never part of svc itself.
 */
import { renameSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import { isMainThread, threadId, workerData } from 'node:worker_threads';

const dir = process.env.THREAD_HEAP_DIR;
if (dir) {
  const role = isMainThread ? 'main' : String((workerData as { role?: string } | null)?.role ?? 'worker');
  const file = `${dir}/${process.pid}-${threadId}.json`;
  const peak: Record<string, number> = {};
  const sample = () => {
    const heap = v8.getHeapStatistics();
    const now = {
      heap: heap.total_physical_size,
      external: heap.external_memory,
      malloced: heap.malloced_memory,
      ...Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.physical_space_size])),
    };
    for (const [k, v] of Object.entries(now)) peak[k] = Math.max(peak[k] ?? 0, v);
    try {
      // Whole files only: the bench may read this one at any moment.
      writeFileSync(`${file}.tmp`, JSON.stringify({ role, threadId, now, peak }));
      renameSync(`${file}.tmp`, file);
    } catch {
      // The directory was removed: the bench is done with this process.
    }
  };
  sample();
  setInterval(sample, 250).unref();
}
