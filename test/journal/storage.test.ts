/**
 * Storage faults are outcomes, not errors (docs/OPERATIONS.md "When the journal cannot write"):
 * svc as a real process (dist/main.js) on the devnet with DB_PATH on a small tmpfs this file
 * mounts. A disk that fills mid-burst: no landed payment is answered with a failure code, nothing
 * is submitted without a journal record, GET /ready fails within 5 s and comes back by itself once
 * space returns, and same-key retries answer every landed payment. A journal file unlinked while
 * svc runs: /ready fails and no settle succeeds until svc restarts on the copy it wrote. A
 * read-only filesystem at start: /ready fails, and settles work once it is writable, without a
 * restart. Mounting needs root: without it the tests are skipped, saying so.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/contract.ts';
import { payments, settle, startSvc, until, type Payment, type Svc } from '../helpers/svc-process.ts';
import { SchemeHarness } from '../scheme/harness.ts';

/** Not final yet: pending on chain, or being settled by another instance right now. */
const PENDING = ['settlement_pending', 'svc_settlement_outcome_unknown'];

/** Mounts a tmpfs of `sizeMiB` (with `options`) on a new directory; the reason when it cannot. */
function mountTmpfs(sizeMiB: number, options = ''): { dir: string } | { error: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-storage-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m${options ? `,${options}` : ''}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { error: String((err as { stderr?: Buffer }).stderr ?? err).trim() || 'mount failed' };
  }
}

const mounted: string[] = [];
function tmpfs(sizeMiB: number, options = ''): string {
  const result = mountTmpfs(sizeMiB, options);
  if ('error' in result) throw new Error(result.error);
  mounted.push(result.dir);
  return result.dir;
}

const probe = process.getuid?.() === 0 ? mountTmpfs(1) : { error: 'not root' };
if ('dir' in probe) {
  execFileSync('umount', [probe.dir]);
  rmSync(probe.dir, { recursive: true, force: true });
}
const skipReason = 'error' in probe ? `cannot mount a tmpfs here (${probe.error}): storage-fault tests skipped` : null;
if (skipReason) console.warn(skipReason);

/** Fills the filesystem of `dir` with one file until the disk says no more. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  // The last bytes too (a chunk smaller than 64 KiB may still have fit).
  const fd2 = openSync(path, 'a');
  try {
    for (;;) writeSync(fd2, Buffer.alloc(512, 1));
  } catch {
    /* full */
  } finally {
    closeSync(fd2);
  }
  return path;
}

/** GET /ready every 200 ms: the moments its status changed, relative to `since`. */
function readyWatch(url: string, since: number) {
  const changes: Array<{ atMs: number; status: number; database: string }> = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const r = await api(url)
        .get('/ready')
        .catch(() => null);
      if (r) {
        const database = String(r.body?.checks?.database?.detail ?? '');
        const last = changes.at(-1);
        if (!last || last.status !== r.status || last.database !== database)
          changes.push({ atMs: Date.now() - since, status: r.status, database });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    changes,
    /** Ms after `since` at which /ready first answered `status` (after `after` ms), once it has. */
    first: (status: number, after = 0) =>
      until(`GET /ready ${status}`, async () => changes.find((c) => c.status === status && c.atMs >= after)?.atMs, 20_000),
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** The svc's log from now on. */
function logOf(svc: Svc): { text: () => string } {
  let text = '';
  svc.child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { text: () => text };
}

let h: SchemeHarness;
const running: Svc[] = [];

async function start(env: Record<string, string>): Promise<Svc> {
  const svc = await startSvc(h.devnet.rpcUrl, { LOG_LEVEL: 'info', ...env });
  running.push(svc);
  return svc;
}

async function stop(svc: Svc): Promise<number | null> {
  svc.child.kill('SIGTERM');
  return svc.exited;
}

/** Resolves once the catalog lists `p`'s resource (discovery answers from the catalog database). */
const listed = (svc: Svc, p: Payment) =>
  until(`${p.url} listed`, async () => {
    const res = await fetch(`${svc.url}/discovery/resources?resource=${encodeURIComponent(p.url)}`);
    const body = res.status === 200 ? ((await res.json()) as { pagination: { total: number } }) : undefined;
    return body && body.pagination.total === 1 ? true : undefined;
  });

/** Every transaction the devnet included whose source is one of `submitters`. */
function includedFrom(submitters: string[]): string[] {
  const sources = new Set(submitters);
  const { ledger } = h.devnet;
  return [...ledger.txs.entries()].filter(([, tx]) => sources.has(ledger.parse(tx.envelopeXdr).source)).map(([hash]) => hash);
}

const landed = (p: Payment) => h.devnet.balances(p.seller.publicKey()).usdc === 100_000n;

describe.skipIf(skipReason !== null)('storage faults on a real tmpfs', () => {
  beforeAll(async () => {
    h = await SchemeHarness.start(250);
  });
  afterAll(async () => {
    for (const svc of running) if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
    await Promise.all(running.map((svc) => svc.exited));
    for (const dir of mounted) {
      try {
        execFileSync('umount', ['-l', dir]);
      } catch {
        /* already gone */
      }
      rmSync(dir, { recursive: true, force: true });
    }
    await h?.stop();
  });

  it('a disk that fills mid-burst: no landed payment answered as a failure, nothing submitted unjournaled, /ready 503 within 5 s and back without a restart, same-key retries answer every landed payment', async () => {
    const dir = tmpfs(16);
    const accounts = await Promise.all(Array.from({ length: 4 }, () => h.devnet.createAccount({ usdcTrustline: false })));
    const submitters = accounts.map((a) => a.publicKey);
    const svc = await start({ SUBMITTER_SECRET: accounts.map((a) => a.secret).join(','), DB_PATH: join(dir, 'svc.sqlite') });
    const log = logOf(svc);
    await until('/ready 200', async () => ((await api(svc.url).get('/ready')).status === 200 ? true : undefined));
    const burst = await payments(h, 24, 60);
    // The first wave (one payment per submitter) is submitted and then held unconfirmed (the RPC
    // cannot tell) while the disk fills: the outcome of each is known only after the fill, when
    // the journal can no longer record it. The rest of the burst is queued behind them.
    h.devnet.faults.set('getTransaction', { kind: 'rpcError', message: 'held by the test' });
    const answers = burst.map((p) => settle(svc.url, p));
    const firstWave = await until('the first wave on chain', async () => {
      const hashes = includedFrom(submitters);
      return hashes.length >= submitters.length ? hashes : undefined;
    });
    const filledAt = Date.now();
    const filler = fill(dir);
    h.devnet.faults.clear();
    const ready = readyWatch(svc.url, filledAt);
    const down = await ready.first(503);
    const bodies = await Promise.all(answers);
    const landedAtAnswer = burst.filter(landed).length;
    // Answered success while the journal could not record it: the record still says `submitted`.
    for (const hash of firstWave) {
      const i = bodies.findIndex((b) => b.body.transaction === hash);
      expect(i, `the answer for ${hash}`).toBeGreaterThanOrEqual(0);
      expect((await api(svc.url).get(`/settlements/${hash}`)).body.state).toBe('submitted');
    }
    // Payments that arrive while the disk is full are refused before submission.
    const late = await payments(h, 3, 60);
    const lateBodies = await Promise.all(late.map((p) => settle(svc.url, p)));

    const codes = bodies.map((b) => (b.body.success ? 'success' : String(b.body.errorReason)));
    const byCode = Object.fromEntries([...new Set(codes)].map((c) => [c, codes.filter((x) => x === c).length]));
    for (const [i, p] of burst.entries()) {
      expect(bodies[i]!.status, JSON.stringify(bodies[i]!.body)).toBe(200);
      // A landed payment is answered success, or as unconfirmed (retry with the key): never a failure.
      if (landed(p)) expect(['success', 'settlement_pending'], JSON.stringify(bodies[i]!.body)).toContain(codes[i]);
      if (codes[i] === 'success') expect(landed(p)).toBe(true);
    }
    expect(codes).not.toContain('unexpected_settle_error');
    expect(lateBodies.map((b) => b.body.errorReason)).toEqual(Array(3).fill('svc_journal_unavailable'));
    expect(late.filter(landed)).toEqual([]);
    expect(down, '/ready 503 after the disk filled (ms)').toBeLessThan(5_000);
    const notReady = ready.changes.find((c) => c.status === 503)!;
    expect(notReady.database).toMatch(/not writable|disk is full/);
    expect(log.text()).toContain('settlement journal cannot write');

    // Space returns: /ready and settles come back without a restart.
    rmSync(filler);
    const freedAt = Date.now() - filledAt;
    const up = (await ready.first(200, freedAt)) - freedAt;
    expect(up, '/ready 200 after space returned (ms)').toBeLessThan(5_000);
    const [fresh] = await payments(h, 1, 60);
    expect((await settle(svc.url, fresh!)).body).toMatchObject({ success: true });

    // Same-key retries: every landed payment answers success with its transaction (once the
    // reconciler or the retry has read the chain); one transfer per payment, whatever happened.
    const retried = await Promise.all(
      [...burst, ...late].map((p) =>
        until(`the outcome of ${p.key}`, async () => {
          const r = await settle(svc.url, p);
          return PENDING.includes(r.body.errorReason) ? undefined : r;
        }),
      ),
    );
    for (const [i, p] of [...burst, ...late].entries()) {
      if (retried[i]!.body.success) expect(landed(p), p.key).toBe(true);
      else expect(landed(p), `${p.key}: ${JSON.stringify(retried[i]!.body)}`).toBe(false);
    }
    for (const p of burst.filter(landed)) expect(retried[burst.indexOf(p)]!.body.success, p.key).toBe(true);
    for (const p of [...burst, ...late]) expect(h.devnet.balances(p.seller.publicKey()).usdc! <= 100_000n).toBe(true);
    // Nothing was submitted without its journal record.
    const included = includedFrom(submitters);
    for (const hash of included) expect((await api(svc.url).get(`/settlements/${hash}`)).status, hash).toBe(200);
    // The catalog, open while the disk was full, writes again: every landed payment is listed.
    for (const p of [...burst, ...late].filter(landed)) await listed(svc, p);
    await ready.stop();
    console.info(
      `full disk mid-burst: answers ${JSON.stringify(byCode)}, landed when answered ${landedAtAnswer}/24 (after same-key retries ${burst.filter(landed).length}); ` +
        `late: ${lateBodies.map((b) => b.body.errorReason).join(', ')}; /ready 503 ${down} ms after the fill, 200 ${up} ms after space returned ` +
        `(space returned at ${freedAt} ms; changes ${JSON.stringify(ready.changes)}); included from svc's submitters ${included.length}, each journaled`,
    );
    expect(await stop(svc)).toBe(0);
  });

  it('the journal file unlinked: /ready 503 and no settle succeeds until svc restarts on the copy it wrote; nothing is forgotten', async () => {
    const dir = tmpfs(16);
    const dbPath = join(dir, 'svc.sqlite');
    const account = await h.devnet.createAccount({ usdcTrustline: false });
    const env = { SUBMITTER_SECRET: account.secret, DB_PATH: dbPath };
    const svc = await start(env);
    const log = logOf(svc);
    const before = await payments(h, 2, 60);
    for (const p of before) expect((await settle(svc.url, p)).body).toMatchObject({ success: true });

    rmSync(dbPath);
    const unlinkedAt = Date.now();
    const ready = readyWatch(svc.url, unlinkedAt);
    const down = await ready.first(503);
    expect(down, '/ready 503 after the unlink (ms)').toBeLessThan(5_000);
    expect(ready.changes.find((c) => c.status === 503)!.database).toContain('deleted or replaced');
    const sequence = await h.rpc.getAccountSequence(account.publicKey);
    const after = await payments(h, 2, 60);
    const refused = await Promise.all(after.map((p) => settle(svc.url, p)));
    expect(refused.map((r) => r.body.errorReason)).toEqual(['svc_journal_unavailable', 'svc_journal_unavailable']);
    expect(refused[0]!.body.errorMessage).toContain('deleted or replaced');
    expect(await h.rpc.getAccountSequence(account.publicKey)).toBe(sequence); // nothing submitted
    // What svc holds is still the answer: a retry of an earlier payment with its key.
    expect((await settle(svc.url, before[0]!)).body).toMatchObject({ success: true });
    // It does not come back by itself (no write into the deleted inode, no second database at the path).
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await api(svc.url).get('/ready')).status).toBe(503);
    expect(existsSync(dbPath)).toBe(false);
    await until('the copy', async () => (log.text().includes('copy of the journal written') ? true : undefined));
    expect(log.text()).toContain('the journal database file was deleted or replaced');
    await ready.stop();
    expect(await stop(svc)).toBe(0);

    // The operator's fix (docs/OPERATIONS.md): the copy back at DB_PATH, then a restart.
    const copy = readdirSync(dir).find((f) => f.startsWith('svc.sqlite.rescued-'));
    expect(copy).toBeDefined();
    for (const leftover of ['-wal', '-shm']) rmSync(`${dbPath}${leftover}`, { force: true });
    renameSync(join(dir, copy!), dbPath);
    const again = await start(env);
    await until('/ready 200', async () => ((await api(again.url).get('/ready')).status === 200 ? true : undefined));
    for (const p of before) {
      const r = await settle(again.url, p);
      expect(r.body, p.key).toMatchObject({ success: true });
      expect((await api(again.url).get(`/settlements/${r.body.transaction}`)).body.state).toBe('settled');
    }
    for (const p of after) expect((await settle(again.url, p)).body).toMatchObject({ success: true });
    console.info(
      `unlinked journal: /ready ${JSON.stringify(ready.changes)}; refused ${refused.length} settles with svc_journal_unavailable`,
    );
    expect(await stop(again)).toBe(0);
  });

  it('a read-only filesystem at start: /ready 503 and settles refused; once writable, /ready 200 and settles work without a restart', async () => {
    const dir = tmpfs(16, 'ro');
    const account = await h.devnet.createAccount({ usdcTrustline: false });
    const svc = await start({ SUBMITTER_SECRET: account.secret, DB_PATH: join(dir, 'svc.sqlite') });
    const log = logOf(svc);
    const startedAt = Date.now();
    const ready = readyWatch(svc.url, startedAt);
    await ready.first(503);
    expect(ready.changes[0]!.database).toContain('cannot open');
    const [p, q] = await payments(h, 2, 60);
    const refused = await settle(svc.url, p!);
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ success: false, errorReason: 'svc_journal_unavailable' });
    expect(landed(p!)).toBe(false);
    // The catalog could not open either: discovery answers 503 svc_catalog_unavailable until it can.
    const discovery = await fetch(`${svc.url}/discovery/resources`);
    expect([discovery.status, ((await discovery.json()) as { error: { code: string } }).error.code]).toEqual([
      503,
      'svc_catalog_unavailable',
    ]);

    execFileSync('mount', ['-o', 'remount,rw', dir]);
    const writableAt = Date.now() - startedAt;
    const up = (await ready.first(200, writableAt)) - writableAt;
    expect(up, '/ready 200 after the remount (ms)').toBeLessThan(5_000);
    expect((await settle(svc.url, p!)).body).toMatchObject({ success: true });
    expect((await settle(svc.url, q!)).body).toMatchObject({ success: true });
    expect(log.text()).toContain('settlement journal writes again');
    // ...and the catalog opens without a restart: both payments are listed.
    await listed(svc, p!);
    await listed(svc, q!);
    await ready.stop();
    console.info(`read-only start: /ready 200 ${up} ms after the remount (at ${writableAt} ms); changes ${JSON.stringify(ready.changes)}`);
    expect(await stop(svc)).toBe(0);
  });
});
