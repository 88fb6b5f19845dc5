/**
 * svc's outbound bound as its checkers use it (docs/SECURITY.md "Requests svc makes of sellers'
 * hosts"): before a request, the host's slot is taken — from the catalog's `probe_hosts`
 * (src/catalog/probe-hosts.ts, shared by every instance), or, for a catalog without one (a test's),
 * from this process's memory. 0 means the request may go; otherwise it is when the host may next
 * be asked (epoch ms).
 */
import { probeHostOf } from '../catalog/probe-hosts.ts';
import type { CatalogPort } from '../catalog/types.ts';

/**
 * Takes `url`'s host's slot (0: taken, else when it frees); with `sent`, the request is being sent
 * now and the slot runs one interval from now (probeLive402's `onSend`): the time between taking
 * the slot and sending never shortens the gap between two requests to the host.
 */
export type HostSlots = (url: string, nowMs: number, sent?: boolean) => Promise<number>;

/** Slots in this process only: for a catalog that keeps none (tests). */
export function memoryHostSlots(intervalMs: number): HostSlots {
  const next = new Map<string, number>();
  return (url, nowMs, sent) => {
    const host = probeHostOf(url);
    const at = next.get(host) ?? 0;
    if (intervalMs > 0 && at > nowMs && !sent) return Promise.resolve(at);
    next.set(host, nowMs + intervalMs);
    if (next.size > 10_000) for (const [h, t] of next) if (t <= nowMs) next.delete(h);
    return Promise.resolve(0);
  };
}

/** The catalog's shared slots (its writer thread's clock); memory when it keeps none; every request allowed at interval 0. */
export function hostSlotsOf(catalog: Pick<CatalogPort, 'reserveProbeHost'>, intervalMs: number): HostSlots {
  if (intervalMs <= 0) return () => Promise.resolve(0);
  const reserve = catalog.reserveProbeHost?.bind(catalog);
  return reserve ? (url, _nowMs, sent) => reserve(probeHostOf(url), intervalMs, sent) : memoryHostSlots(intervalMs);
}
