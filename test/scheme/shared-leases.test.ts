/**
 * Submitters shared by several instances (docs/SCALING.md): two SubmitterPools over the same
 * accounts, each with its own PostgresSubmitterLeases on one real PostgreSQL database, stand for
 * two svc instances. No account is ever in use by both at once; a pool re-reads a sequence the
 * other pool may have moved; a lease of an instance that died frees itself after its time to live.
 */
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignerSelectionError, SubmitterPool } from '../../src/chains/stellar/submitters.ts';
import { PostgresSubmitterLeases } from '../../src/db/submitter-leases.ts';
import { DEFAULTS } from '../../src/config.ts';
import { freshDatabase, lateDatabase } from '../helpers/postgres.ts';

let url: string;
const opened: PostgresSubmitterLeases[] = [];
beforeAll(async () => {
  url = await freshDatabase();
});
afterAll(async () => {
  await Promise.all(opened.map((l) => l.close()));
});

function leases(options: { ttlMs?: number } = {}): PostgresSubmitterLeases {
  const l = new PostgresSubmitterLeases(url, { ttlMs: DEFAULTS.SUBMITTER_LEASE_TTL_MS, ...options });
  opened.push(l);
  return l;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgresSubmitterLeases', () => {
  it('one holder at a time; the same holder again is continuous only if nobody held it between', async () => {
    const account = Keypair.random().publicKey();
    const a = leases();
    const b = leases();
    const first = await a.acquire(account);
    expect(first).not.toBeNull();
    expect(first!.continuous).toBe(false); // never held by this instance before
    expect(await b.acquire(account)).toBeNull();
    await first!.release();
    const again = await a.acquire(account);
    expect(again!.continuous).toBe(true);
    await again!.release();
    const other = await b.acquire(account);
    expect(other).not.toBeNull();
    await other!.release();
    expect((await a.acquire(account))!.continuous).toBe(false); // b used it in between
  });

  it('a late release of an old lease never frees a newer one', async () => {
    const account = Keypair.random().publicKey();
    const a = leases();
    const b = leases();
    const old = await a.acquire(account);
    await old!.release();
    const current = await a.acquire(account);
    await old!.release(); // a second call is a no-op
    expect(await b.acquire(account)).toBeNull();
    await current!.release();
  });

  it('a lease of an instance that stopped renewing frees itself after its time to live; held ones are renewed', async () => {
    const account = Keypair.random().publicKey();
    const kept = Keypair.random().publicKey();
    // A time to live of 3 s renews the live lease every second: a loaded machine that delays one
    // renewal by a few hundred milliseconds must not free it (600 ms did, beside two busy loops).
    const ttlMs = 3_000;
    const dead = leases({ ttlMs });
    const alive = leases({ ttlMs });
    const other = leases();
    const started = Date.now();
    expect(await dead.acquire(account)).not.toBeNull();
    await dead.close(); // no more renewals, no release: a crash
    expect(await alive.acquire(kept)).not.toBeNull();
    expect(await other.acquire(account)).toBeNull();
    // The dead lease frees itself once its time to live has passed, not before.
    let freed = await other.acquire(account);
    while (!freed && Date.now() - started < ttlMs + 10_000) {
      await sleep(100);
      freed = await other.acquire(account);
    }
    expect(freed).not.toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(ttlMs - 100);
    expect(await other.acquire(kept)).toBeNull(); // renewed all along
  });
});

describe('two SubmitterPools sharing accounts through Postgres', () => {
  it('never use one account from both instances at once, and all settlements get a submitter', async () => {
    const keys = [Keypair.random(), Keypair.random(), Keypair.random()];
    const sequences = new Map(keys.map((k) => [k.publicKey(), 100n]));
    const loadSequence = async (address: string) => sequences.get(address)!;
    const pools = [0, 1].map(() => new SubmitterPool(keys, { loadSequence, shared: leases(), waitTimeoutMs: 20_000 }));
    const inUse = new Set<string>();
    let overlaps = 0;
    let staleSequences = 0;
    const settle = async (pool: SubmitterPool) => {
      const lease = await pool.lease();
      if (inUse.has(lease.address)) overlaps++;
      inUse.add(lease.address);
      // The transaction uses sequence()+1: it must be the account's next one, whoever used it last.
      if ((await lease.sequence()) !== sequences.get(lease.address)) staleSequences++;
      await sleep(5 + Math.random() * 10);
      sequences.set(lease.address, sequences.get(lease.address)! + 1n);
      lease.consumed();
      inUse.delete(lease.address);
      lease.release();
    };
    await Promise.all(Array.from({ length: 60 }, (_, i) => settle(pools[i % 2]!)));
    expect(overlaps).toBe(0);
    expect(staleSequences).toBe(0);
    expect([...sequences.values()].reduce((s, v) => s + v - 100n, 0n)).toBe(60n);
  });

  it('times out with SignerSelectionError while the other instance holds every account; a database that is down is a clear refusal', async () => {
    const keys = [Keypair.random()];
    const loadSequence = async () => 1n;
    const holder = new SubmitterPool(keys, { loadSequence, shared: leases() });
    const waiter = new SubmitterPool(keys, { loadSequence, shared: leases(), waitTimeoutMs: 300 });
    const held = await holder.lease();
    const started = Date.now();
    await expect(waiter.lease()).rejects.toThrow(/No submitter became free within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
    held.release();
    const later = await waiter.lease();
    expect(later.address).toBe(keys[0]!.publicKey());
    later.release();

    const down = new PostgresSubmitterLeases('postgres://svc:pw-not-shown@127.0.0.1:1/none', { ttlMs: DEFAULTS.SUBMITTER_LEASE_TTL_MS });
    opened.push(down);
    const refused = new SubmitterPool(keys, { loadSequence, shared: down });
    const err = await refused.lease().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignerSelectionError);
    expect((err as Error).message).toMatch(/^Submitter leases are unavailable \(database ECONNREFUSED\)\.$/);
    expect(refused.busy).toBe(0);
  });
});

describe('PostgresSubmitterLeases on a database that appears after svc started', () => {
  it('an acquire while the database is missing fails; once it exists the next one migrates and takes the lease', async () => {
    const late = lateDatabase();
    const l = new PostgresSubmitterLeases(late.url, { ttlMs: DEFAULTS.SUBMITTER_LEASE_TTL_MS });
    opened.push(l);
    const account = Keypair.random().publicKey();
    await expect(l.acquire(account)).rejects.toThrow(/does not exist/);
    await late.create();
    expect(await l.acquire(account)).not.toBeNull();
  });
});
