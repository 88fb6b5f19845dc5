/**
 * On Linux the nice value is per thread (setpriority(2) accepts a thread id), so a worker thread can
 * yield the CPU to the thread answering /verify and /settle without touching the rest of the
 * process. Lowering one's own priority needs no privilege; elsewhere (or if refused) this is a no-op
 * and the thread runs at the default priority.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Discovery (catalog readers) and seller-schema validation run below payments. Not lower than 10:
 * at nice 19 a thread gets ~1.5% of a core beside busy ones, so honest schemas on a loaded machine
 * would miss their wall-clock budget.
 */
export const BACKGROUND_THREAD_NICE = 10;

/** Lowers the calling thread's priority to `nice`; threads it starts later inherit it. */
export function lowerThreadPriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or not permitted
  }
}
