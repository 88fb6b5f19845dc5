/**
 * On Linux the nice value is per thread (setpriority(2) accepts a thread id), so a worker thread can
 * yield the CPU to the thread answering /verify and /settle without touching the rest of the
 * process. Lowering one's own priority needs no privilege; elsewhere (or if refused) this is a no-op
 * and the thread runs at the default priority.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Discovery threads (catalog readers): below payments, above hostile work. */
export const DISCOVERY_THREAD_NICE = 10;
/** Seller-schema validation: the lowest priority, since a hostile schema burns its whole budget. */
export const SCHEMA_THREAD_NICE = 19;

/** Lowers the calling thread's priority to `nice`; threads it starts later inherit it. */
export function lowerThreadPriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or not permitted
  }
}
