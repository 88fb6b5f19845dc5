/**
 * The journal as the composition root mounts it (createService with the configured Stellar
 * scheme, no overrides): every settle is journaled at DB_PATH, a copy is not submitted again,
 * and a journal that cannot open refuses to settle (`svc_journal_unavailable`) before anything is
 * sent.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/contract.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { tempDbPath } from './harness.ts';
import { httpBazaar } from '../catalog/fixtures.ts';
import { until } from '../helpers/svc-process.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

async function serviceAt(dbPath: string, env: Record<string, string> = {}, options: { realReadiness?: boolean } = {}) {
  const submitter = await h.devnet.createAccount({ usdcTrustline: false });
  const server = await startTestServer({
    config: testConfig({ SUBMITTER_SECRET: submitter.secret, RPC_URL: h.devnet.rpcUrl, DB_PATH: dbPath, ...env }),
    ...(options.realReadiness ? { readiness: undefined } : {}),
  });
  return { server, client: api(server.url), submitter: server.config.submitters[0]! };
}

async function payment() {
  const { buyer, seller } = await h.parties();
  const req = h.requirements(seller.publicKey());
  return { buyer, seller, req, body: { x402Version: 2, paymentPayload: await h.pay(req, buyer), paymentRequirements: req } };
}

describe('createService mounts the settlement journal', () => {
  it('journals a settle at DB_PATH: a copy gets the replay code, GET /settlements shows the record', async () => {
    const { server, client, submitter } = await serviceAt(tempDbPath());
    const p = await payment();
    const sequence = await h.rpc.getAccountSequence(submitter);
    const [first, copy] = await Promise.all([client.post('/settle', p.body), client.post('/settle', p.body)]);
    const bodies = [first.body, copy.body];
    const success = bodies.find((b) => b.success);
    expect(success).toBeDefined();
    expect(bodies.filter((b) => b.errorReason === 'invalid_exact_stellar_payload_simulation_failed')).toHaveLength(1);
    expect((await h.rpc.getAccountSequence(submitter)) - sequence).toBe(1n);
    const record = await client.get(`/settlements/${success.transaction}`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      transaction: success.transaction,
      state: 'settled',
      payer: p.buyer.publicKey(),
      payTo: p.seller.publicKey(),
    });
    await server.close();
  });

  it('a journal that cannot open: settle is refused with svc_journal_unavailable and nothing is submitted; verify still answers; /ready names the database', async () => {
    const { server, client, submitter } = await serviceAt('/dev/null/svc.sqlite', {}, { realReadiness: true });
    const p = await payment();
    const sequence = await h.rpc.getAccountSequence(submitter);
    const verified = await client.post('/verify', p.body);
    expect(verified.body).toMatchObject({ isValid: true });
    const settled = await client.post('/settle', p.body);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ success: false, errorReason: 'svc_journal_unavailable' });
    expect(settled.body.errorMessage).toContain('cannot open');
    const ready = await client.get('/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database.ok).toBe(false);
    expect(JSON.stringify([settled.body, ready.body])).not.toContain('/dev/null');
    expect(await h.rpc.getAccountSequence(submitter)).toBe(sequence);
    expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(0n);
    await server.close();
  });

  it('with DATABASE_URL the journal is in Postgres: the record is there, not in DB_PATH', async () => {
    const url = await freshDatabase();
    const dbPath = tempDbPath();
    const { server, client } = await serviceAt(dbPath, { DATABASE_URL: url });
    const p = await payment();
    const settled = await client.post('/settle', p.body);
    expect(settled.body.success).toBe(true);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const rows = await db.query('SELECT state, tx_hash FROM journal_settlements');
    await db.end();
    expect(rows.rows).toEqual([{ state: 'settled', tx_hash: settled.body.transaction }]);
    const file = new DatabaseSync(dbPath);
    const local = file.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'journal_settlements'").get() as { n: number };
    file.close();
    expect(local.n).toBe(0);
    await server.close();
  });

  it('a Postgres that is down: verify answers, settle is refused before anything is sent, /ready names the database, the URL is never shown', async () => {
    const down = 'postgres://svc:pw-never-shown@127.0.0.1:1/svc';
    const { server, client, submitter } = await serviceAt(tempDbPath(), { DATABASE_URL: down }, { realReadiness: true });
    const p = await payment();
    const sequence = await h.rpc.getAccountSequence(submitter);
    expect((await client.post('/verify', p.body)).body).toMatchObject({ isValid: true });
    const settled = await client.post('/settle', p.body);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ success: false, errorReason: 'svc_journal_unavailable' });
    expect(await h.rpc.getAccountSequence(submitter)).toBe(sequence);
    expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(0n);
    const ready = await client.get('/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database).toMatchObject({ ok: false, detail: 'not reachable (ECONNREFUSED)' });
    for (const r of [settled, ready, await client.get('/health')]) expect(JSON.stringify(r.body)).not.toContain('pw-never-shown');
    await server.close();
  });
  it('a listing that faults is not lost: the record stays unlisted and the reconciler lists it once the catalog is back', async () => {
    const url = await freshDatabase();
    const { server, client } = await serviceAt(tempDbPath(), { DATABASE_URL: url, RECONCILE_INTERVAL_MS: '100' });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      // The catalog is up (its tables exist), then its write sequence row is held by someone else:
      // every catalog write waits for it and gives up at its lock timeout. The catalog's stores
      // migrate on first use, and a settle without a bazaar extension does not use it: a discovery
      // request makes sure the tables exist.
      const warm = await payment();
      expect((await client.post('/settle', warm.body)).body.success).toBe(true);
      expect((await client.get('/discovery/resources')).status).toBe(200);
      await db.query('BEGIN');
      await db.query("SELECT value FROM catalog_meta WHERE key = 'seq' FOR UPDATE");
      const p = await payment();
      const resource = `https://faulted.example.com/${p.seller.publicKey().slice(0, 10)}`;
      p.body.paymentPayload = {
        ...p.body.paymentPayload,
        resource: { url: resource, description: 'faulted listing' },
        extensions: { bazaar: httpBazaar() },
      };
      const settled = await client.post('/settle', p.body);
      expect(settled.body.success).toBe(true);
      expect(settled.headers.get('extension-responses')).toBeNull(); // the hook faulted: no entry
      const listed = async () =>
        (await db.query('SELECT listed FROM journal_settlements WHERE tx_hash = $1', [settled.body.transaction])).rows[0]?.listed;
      expect(await listed()).toBe(false);
      await db.query('COMMIT');
      // The reconciler lists settled records after a 10 s grace; age the record past it.
      await db.query('UPDATE journal_settlements SET updated_at = updated_at - 20000 WHERE tx_hash = $1', [settled.body.transaction]);
      await until('the reconciler lists the payment', async () => ((await listed()) === true ? true : undefined));
      const found = await client.get(`/discovery/resources?resource=${encodeURIComponent(resource)}`);
      expect(found.body.items.map((i: { resource: string }) => i.resource)).toEqual([resource]);
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
      await server.close();
    }
  });
});
