/**
 * The journal's answers when its store cannot write (docs/OPERATIONS.md "When the journal cannot
 * write"), over real HTTP on the devnet with a real SQLite journal whose calls fail on demand at the
 * JournalStore boundary, as a full disk makes them fail. A reserve that fails refuses before
 * submission; a result that cannot be recorded is answered as what svc knows (a confirmed success,
 * else settlement_pending, whose retry is answered from the record) and stays recoverable. The real faults (a full tmpfs, an unlinked file, a
 * read-only filesystem) with real processes are test/journal/storage.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import type { JournalStore } from '../../src/journal/types.ts';
import { api } from '../helpers/contract.ts';
import { until } from '../helpers/svc-process.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { journaledFacilitator, tempDbPath } from './harness.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

/** A SQLite store whose `failing` calls reject the way SQLite does on a full disk. */
function faultyStore(): { store: JournalStore; failing: Set<string> } {
  const real = new SqliteJournalStore(tempDbPath());
  const failing = new Set<string>();
  const store = new Proxy(real, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        failing.has(String(property))
          ? Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 }))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  return { store, failing };
}

async function paid() {
  const { buyer, seller } = await h.parties();
  const req = h.requirements(seller.publicKey());
  return { seller, req, payload: await h.pay(req, buyer) };
}

describe('a journal that cannot write', () => {
  it('a reserve that fails: svc_journal_unavailable before submission; settles stay refused while the probe fails and resume once a write succeeds', async () => {
    const { store, failing } = faultyStore();
    const f = await journaledFacilitator(h, { store });
    try {
      const [p, q] = [await paid(), await paid()];
      const sequence = await h.rpc.getAccountSequence(f.submitter);
      failing.add('reserve').add('probe');
      const refused = await f.settle(p.payload, p.req, 'key-p');
      expect(refused.status).toBe(200);
      expect(refused.body).toMatchObject({ success: false, errorReason: 'svc_journal_unavailable' });
      expect(refused.body.errorMessage).toContain('database or disk is full');
      // Still faulted: refused again, before anything is built or sent.
      failing.delete('reserve');
      expect((await f.settle(q.payload, q.req, 'key-q')).body.errorReason).toBe('svc_journal_unavailable');
      expect(await h.rpc.getAccountSequence(f.submitter)).toBe(sequence);
      expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(0n);
      // A write succeeds again: the next settle (after the probe interval) goes through.
      failing.clear();
      const settled = await until('a settle after the fault', async () => {
        const r = await f.settle(p.payload, p.req, 'key-p');
        return r.body.errorReason === 'svc_journal_unavailable' ? undefined : r;
      });
      expect(settled.body).toMatchObject({ success: true });
      expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(100_000n);
    } finally {
      await f.close();
    }
  });

  it('a result that cannot be recorded: a confirmed success is answered success and written (and listed) by the reconciler later; a rejected submission is answered settlement_pending, and so is its retry', async () => {
    const { store, failing } = faultyStore();
    const f = await journaledFacilitator(h, { store });
    try {
      const p = await paid();
      failing.add('resolve');
      const settled = await f.settle(p.payload, p.req, 'key-p');
      expect(settled.body).toMatchObject({ success: true });
      expect((await api(f.url).get(`/settlements/${settled.body.transaction}`)).body.state).toBe('submitted');
      expect(f.landed).toEqual([]); // the listing waits for the record
      failing.clear();
      await until('the record settled by the reconciler', async () => {
        await f.journal.reconcile(f.scheme.tracking);
        return (await api(f.url).get(`/settlements/${settled.body.transaction}`)).body.state === 'settled' ? true : undefined;
      });
      expect(f.landed).toHaveLength(1);
      expect((await f.settle(p.payload, p.req, 'key-p')).body).toMatchObject({ success: true, transaction: settled.body.transaction });

      const q = await paid();
      await until('the journal writing again', async () => ((await f.journal.writeCheck()).ok ? true : undefined));
      h.devnet.faults.sendStatus('ERROR', { times: 1 });
      failing.add('resolve').add('markOwed');
      const rejected = await f.settle(q.payload, q.req, 'key-q');
      expect(rejected.body).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        transaction: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(rejected.body.errorMessage).toContain('could not record its outcome');
      failing.clear();
      expect((await store.unresolved(10)).map((r) => [r.payTo, r.state])).toEqual([[q.seller.publicKey(), 'submitted']]);
      expect(h.devnet.balances(q.seller.publicKey()).usdc).toBe(0n);
      // The SDKs' retry (the same request, no key) is owed the outcome although the store could not
      // record that (kept in memory): it is answered from the record, pending still, never a replay.
      const retry = await f.settle(q.payload, q.req);
      expect(retry.body).toMatchObject({ errorReason: 'settlement_pending', transaction: rejected.body.transaction });
    } finally {
      h.devnet.faults.clear();
      await f.close();
    }
  });
});
