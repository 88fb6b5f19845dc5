/**
 * Several svc instances on one PostgreSQL database (docs/SCALING.md), as real processes on one
 * devnet, sharing one list of submitter accounts:
 * - a burst of settles and discovery requests spread over three instances, one of them killed with
 *   SIGKILL mid-burst: the survivors answer every discovery request in the declared shape, and
 *   no payment is settled twice, no settle fails for contention (submitter or sequence), every
 *   payment the chain took has its journal record (visible from any instance) and its listing, and
 *   a retry of a cut-off request on a surviving instance answers the chain's truth;
 * - the same payment sent to two instances at the same moment is submitted once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/contract.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { payments, settle, startSvc, until, type Payment, type Svc } from '../helpers/svc-process.ts';
import { tempDbPath } from '../journal/harness.ts';
import { SchemeHarness } from '../scheme/harness.ts';

/** Not final yet: pending on chain, or being settled by another instance right now. */
const PENDING = ['settlement_pending', 'svc_settlement_outcome_unknown'];

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

const BURST_VALIDITY_SECONDS = 40;

/** Codes that would mean two instances got in each other's way. */
const CONTENTION = /signer_selection|sequence|bad_seq|unexpected_settle_error/;

async function instances(count: number, submitterCount: number): Promise<{ svcs: Svc[]; submitters: string[]; stop: () => Promise<void> }> {
  const url = await freshDatabase();
  const accounts = await Promise.all(Array.from({ length: submitterCount }, () => h.devnet.createAccount({ usdcTrustline: false })));
  const env = { SUBMITTER_SECRET: accounts.map((a) => a.secret).join(','), DATABASE_URL: url };
  // DB_PATH is unused with DATABASE_URL (everything is in Postgres); each gets its own anyway.
  const svcs = await Promise.all(Array.from({ length: count }, () => startSvc(h.devnet.rpcUrl, { ...env, DB_PATH: tempDbPath() })));
  return {
    svcs,
    submitters: accounts.map((a) => a.publicKey),
    stop: async () => {
      for (const svc of svcs) svc.child.kill('SIGKILL');
      await Promise.all(svcs.map((s) => s.exited));
    },
  };
}

describe('three instances, one database, shared submitters', () => {
  it('a burst of settles and discovery requests spread over three instances, one killed mid-burst: no double settlement, no contention failure, every discovery request to a survivor answered, every landed payment journaled and listed', async () => {
    const { svcs, submitters, stop } = await instances(3, 4);
    try {
      const sequencesBefore = await Promise.all(submitters.map((s) => h.rpc.getAccountSequence(s)));
      // 40 s of validity: under a full test run on 2 cores the burst can take over 20 s, and a
      // payment that waited past its authorization's expiry is (rightly) refused. A payment the
      // killed instance reserved but never got onto the chain resolves once its time bound passes.
      const burst = await payments(h, 24, BURST_VALIDITY_SECONDS);
      const answers = burst.map((p, i) => settle(svcs[i % 3]!.url, p).catch(() => null));
      // Discovery requests spread over the same three instances while the burst runs (each answer
      // checked against openapi.yaml); those sent to the killed instance may get no answer.
      let bursting = true;
      const discovery = { answered: [0, 0, 0], busy: 0 };
      const browse = async (loop: number) => {
        for (let k = loop; bursting; k += 2) {
          const i = k % 3;
          const path = k % 4 < 2 ? '/discovery/resources?limit=5' : '/discovery/search?query=journal&limit=5';
          const answer = await api(svcs[i]!.url)
            .get(path)
            .catch((err: unknown) => {
              if (i === 0) return null; // the killed instance
              throw err;
            });
          if (!answer) continue;
          if (answer.status === 503) {
            // Payments first on a busy instance (docs/OPERATIONS.md "Payments before discovery").
            expect(answer.body.error.code).toBe('svc_catalog_busy');
            discovery.busy++;
          } else {
            expect(answer.status, path).toBe(200);
            discovery.answered[i]!++;
          }
        }
      };
      const browsing = [browse(0), browse(1)];
      // Killed at the first answer: its other settles are queued, submitted or being confirmed.
      await Promise.race(answers);
      svcs[0]!.child.kill('SIGKILL');
      await svcs[0]!.exited;
      const answered = await Promise.all(answers);
      bursting = false;
      await Promise.all(browsing);
      expect(discovery.answered[1]! + discovery.answered[2]!, JSON.stringify(discovery)).toBeGreaterThan(0);

      const survivors = svcs.slice(1);
      // Requests to the survivors were all answered, and none failed for contention.
      answered.forEach((answer, i) => {
        if (i % 3 === 0) return;
        expect(answer, `payment ${i}`).not.toBeNull();
        expect(answer!.body.success, JSON.stringify(answer!.body)).toBe(true);
      });
      const cutOff = burst.filter((_, i) => answered[i] === null);
      expect(cutOff.length, 'requests cut off by the kill').toBeGreaterThan(0);

      // Every payment, asked again on a surviving instance with its key, answers the chain's truth;
      // the survivors' reconcilers resolve what the dead instance left in the shared journal.
      let landed = 0;
      await Promise.all(
        burst.map(async (p: Payment, i) => {
          const retry = await until(
            `the outcome of ${p.key}`,
            async () => {
              const r = await settle(survivors[i % 2]!.url, p);
              return PENDING.includes(r.body.errorReason) ? undefined : r;
            },
            (BURST_VALIDITY_SECONDS + 20) * 1000,
          );
          expect(retry.body.errorReason ?? '', JSON.stringify(retry.body)).not.toMatch(CONTENTION);
          const balance = h.devnet.balances(p.seller.publicKey()).usdc;
          if (retry.body.success) {
            landed++;
            expect(balance).toBe(100_000n); // exactly one transfer
            expect((await h.rpc.getTransaction(retry.body.transaction)).status).toBe('SUCCESS');
            // The record is in the shared journal: every surviving instance shows it.
            for (const svc of survivors) {
              const record = await api(svc.url).get(`/settlements/${retry.body.transaction}`);
              expect(record.body.state).toBe('settled');
            }
          } else {
            expect(balance).toBe(0n);
          }
        }),
      );
      expect(landed).toBeGreaterThanOrEqual(16);
      // Every landed payment carried a bazaar extension: it is listed, seen from every survivor,
      // including those whose request died with the killed instance (the reconcilers list them).
      const landedUrls = burst.filter((p) => h.devnet.balances(p.seller.publicKey()).usdc === 100_000n).map((p) => p.url);
      for (const svc of survivors) {
        await until('every landed payment listed', async () => {
          const page = await api(svc.url).get('/discovery/resources?limit=100');
          const listed = new Set(page.body.items.map((item: { resource: string }) => item.resource));
          return landedUrls.every((url) => listed.has(url)) ? true : undefined;
        });
      }
      // No transaction was wasted on a sequence clash: each landed payment moved one sequence.
      const sequencesAfter = await Promise.all(submitters.map((s) => h.rpc.getAccountSequence(s)));
      const used = sequencesAfter.reduce((sum, after, i) => sum + (after - sequencesBefore[i]!), 0n);
      expect(used).toBe(BigInt(landed));
    } finally {
      await stop();
    }
  }, 150_000); // the retries may wait out BURST_VALIDITY_SECONDS

  it('the same payment sent to two instances at the same moment is submitted once', async () => {
    const { svcs, submitters, stop } = await instances(2, 2);
    try {
      const sequencesBefore = await Promise.all(submitters.map((s) => h.rpc.getAccountSequence(s)));
      for (let round = 0; round < 5; round++) {
        // Each signed right before its round: five signed up front spent their 20 s validity
        // waiting for the rounds before them on a loaded machine (svc_policy_authorization_expiring).
        const [p] = await payments(h, 1, 20);
        const [a, b] = await Promise.all([settle(svcs[0]!.url, p!), settle(svcs[1]!.url, p!)]);
        const bodies = [a.body, b.body];
        expect(
          bodies.filter((x) => x.success),
          JSON.stringify(bodies),
        ).toHaveLength(bodies.every((x) => x.success) ? 2 : 1);
        // A replay with the same key answers the first outcome (both success with one hash), or is
        // refused as a duplicate: never a second transfer.
        const hashes = new Set(bodies.filter((x) => x.success).map((x) => x.transaction));
        expect(hashes.size).toBe(1);
        expect(h.devnet.balances(p!.seller.publicKey()).usdc).toBe(100_000n);
      }
      const sequencesAfter = await Promise.all(submitters.map((s) => h.rpc.getAccountSequence(s)));
      expect(sequencesAfter.reduce((sum, after, i) => sum + (after - sequencesBefore[i]!), 0n)).toBe(5n);
    } finally {
      await stop();
    }
  });
});
