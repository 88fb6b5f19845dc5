/**
 * Schemas judged too complex are remembered for a while, per seller (the caller's `scope`) and by
 * a hash of the schema and `info`, whose pair decides the cost: a seller sends the same schema
 * with each settlement, and a hostile one must cost a thread once, not once per settlement, nor
 * wait for a thread while others are replaced. Scoped to the seller, so one seller's verdict never
 * falls on another who happens to send the same schema. Used by the sandbox (schema-validator.ts).
 */
import { createHash } from 'node:crypto';

/** At most this many verdicts are remembered; the oldest goes first. */
const RECENT_VERDICTS = 256;
/** How long a verdict is remembered when the schema used its whole CPU budget or killed its thread. */
const RECENT_VERDICT_MS = 10 * 60_000;
/**
 * How long a verdict given at the wall-clock bound is remembered: the thread was slowed by other
 * work, so an honest but heavy schema (tens of ms of CPU) can be caught there too. Long enough that
 * a hostile seller's burst costs a thread once; short enough that an honest seller's next
 * settlements are judged again soon.
 */
const BOUND_VERDICT_MS = 60_000;

/** The key of a (seller, schema, info) triple, or undefined when it is not JSON (judged afresh each time). */
export function verdictKey(scope: string, schema: unknown, info: unknown): string | undefined {
  try {
    return createHash('sha256')
      .update(JSON.stringify([scope, schema, info]))
      .digest('base64');
  } catch {
    return undefined; // not JSON (never from a request body): judged afresh each time
  }
}

export class RecentVerdicts<Verdict> {
  private readonly entries = new Map<string, { verdict: Verdict; until: number }>();

  /** `rememberBoundMs`: how long a verdict given at the wall-clock bound is kept (a test shortens it). */
  constructor(private readonly rememberBoundMs: number = BOUND_VERDICT_MS) {}

  get(key: string | undefined): Verdict | undefined {
    const entry = key === undefined ? undefined : this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > performance.now()) return entry.verdict;
    this.entries.delete(key!);
    return undefined;
  }

  /** `atBound`: the verdict was given at the wall-clock bound, so it is kept for less time. */
  remember(key: string | undefined, verdict: Verdict, atBound: boolean): void {
    if (key === undefined) return;
    this.entries.delete(key);
    this.entries.set(key, { verdict, until: performance.now() + (atBound ? this.rememberBoundMs : RECENT_VERDICT_MS) });
    if (this.entries.size > RECENT_VERDICTS) this.entries.delete(this.entries.keys().next().value!);
  }
}
