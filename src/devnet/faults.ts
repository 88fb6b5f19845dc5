/**
 * Fault injection for reliability tests (src/devnet/types.ts FaultSwitches). Each switch is
 * consumed per call (`times`, default: until cleared); the RPC layer asks here before doing
 * real work, so a fault can never corrupt ledger state or crash the server.
 */
import type { Fault, FaultSwitches, RpcMethod } from './types.ts';

interface Counted<T> {
  value: T;
  remaining: number; // Infinity = until cleared
}

function take<T>(slot: Counted<T> | undefined): T | undefined {
  if (!slot || slot.remaining <= 0) return undefined;
  slot.remaining -= 1;
  return slot.value;
}

export class Faults implements FaultSwitches {
  private methodFaults = new Map<RpcMethod, Counted<Fault>>();
  private status: Counted<'TRY_AGAIN_LATER' | 'ERROR'> | undefined;
  private drops: Counted<true> | undefined;
  lag = 0;

  set(method: RpcMethod, fault: Fault, opts: { times?: number } = {}): void {
    this.methodFaults.set(method, { value: fault, remaining: opts.times ?? Infinity });
  }

  sendStatus(status: 'TRY_AGAIN_LATER' | 'ERROR', opts: { times?: number } = {}): void {
    this.status = { value: status, remaining: opts.times ?? Infinity };
  }

  dropSubmissions(opts: { times?: number } = {}): void {
    this.drops = { value: true, remaining: opts.times ?? Infinity };
  }

  lagLedger(ledgers: number): void {
    this.lag = Math.max(0, Math.floor(ledgers));
  }

  clear(): void {
    this.methodFaults.clear();
    this.status = undefined;
    this.drops = undefined;
    this.lag = 0;
  }

  /** The fault to apply to this call of `method`, if any (consumes one use). */
  takeMethodFault(method: string): Fault | undefined {
    return take(this.methodFaults.get(method as RpcMethod));
  }

  takeSendStatus(): 'TRY_AGAIN_LATER' | 'ERROR' | undefined {
    return take(this.status);
  }

  takeDrop(): boolean {
    return take(this.drops) === true;
  }
}
