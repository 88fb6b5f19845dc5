/**
 * The drain (docs/OPERATIONS.md "Shutdown (drain)") when svc runs under `npm start` as the leader
 * of a process group of its own, the way a terminal or a supervisor runs it: a signal to the group
 * (`kill -- -PGID`, Ctrl-C) reaches npm and svc, and npm relays it to svc, so svc receives it
 * twice within milliseconds. The relay must not count as the "second signal": with 20 real settles
 * in flight on the devnet, SIGTERM and SIGINT to the group answer all 20 and every process exits 0.
 * A deliberate second signal after the relay window still exits at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemeHarness } from '../scheme/harness.ts';
import { tempDbPath } from '../journal/harness.ts';
import { payments, settle, settlesInside, startSvc, type Svc } from '../helpers/svc-process.ts';
import { RELAY_WINDOW_MS } from '../../src/lifecycle.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

/** `npm start` in its own process group, settling from `submitters` new accounts. */
async function npmStart(submitters: number): Promise<Svc> {
  const accounts = await Promise.all(Array.from({ length: submitters }, () => h.devnet.createAccount({ usdcTrustline: false })));
  return startSvc(
    h.devnet.rpcUrl,
    { SUBMITTER_SECRET: accounts.map((a) => a.secret).join(','), DB_PATH: tempDbPath() },
    { npmStart: true },
  );
}

/** Lets the group's processes go if an assertion failed before they exited. */
function killGroup(svc: Svc): void {
  try {
    process.kill(-svc.child.pid!, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

describe('npm start in its own process group', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the whole group with 20 settles in flight: npm relays it, the drain goes on, all 20 answered, exit 0',
    async (signal) => {
      // Two submitters settle the 20 over a few seconds: most are in flight when the signal comes.
      const svc = await npmStart(2);
      try {
        const burst = await payments(h, 20, 60);
        const answers = burst.map((p) => settle(svc.url, p));
        const inFlight = await settlesInside(svc, 20);
        process.kill(-svc.child.pid!, signal);
        const bodies = await Promise.all(answers);
        expect(bodies.map((b) => b.body.success)).toEqual(Array(20).fill(true));
        expect(await svc.exited, svc.output().slice(-2000)).toBe(0);
        expect(inFlight, 'settles in flight when the signal was sent').toBeGreaterThanOrEqual(10);
        const log = svc.output();
        expect(log).toContain('draining: no new connections');
        expect(log).not.toContain('second signal: exiting at once');
        expect(log).toMatch(/"result":"drained".*"msg":"svc stopped"/);
        // Usually svc sees both copies; when both reach it before its handler runs, the kernel
        // delivers one.
        const relayed = log.includes('taken as the first one relayed');
        console.log(`${signal} to the group: ${inFlight} of 20 settles in flight, all 20 answered, exit 0 (relay seen: ${relayed})`);
      } finally {
        killGroup(svc);
      }
    },
  );

  it(`a deliberate second signal later than ${RELAY_WINDOW_MS} ms after the first exits at once`, async () => {
    const svc = await npmStart(1);
    const [p] = await payments(h, 1, 60);
    // The settle waits on the chain until its time bound: only the second signal can end the drain.
    h.devnet.faults.set('getTransaction', { kind: 'timeout' });
    try {
      const answer = settle(svc.url, p!).catch(() => null);
      await settlesInside(svc, 1);
      process.kill(-svc.child.pid!, 'SIGTERM');
      await new Promise((r) => setTimeout(r, RELAY_WINDOW_MS + 1_000));
      expect(svc.child.exitCode, svc.output().slice(-2000)).toBeNull(); // still draining
      const sent = Date.now();
      process.kill(-svc.child.pid!, 'SIGTERM');
      // npm passes svc's status on: 128 + 15.
      expect(await svc.exited).toBe(143);
      expect(Date.now() - sent, 'from the second signal to the exit').toBeLessThan(10_000);
      expect(svc.output()).toContain('second signal: exiting at once');
      await answer;
    } finally {
      h.devnet.faults.clear();
      killGroup(svc);
    }
  });
});
