/**
 * Recovery from storage faults outside the journal's own tests (docs/OPERATIONS.md "When the
 * journal cannot write"): a catalog that could not open at start is opened again once it can be,
 * without a restart; and the settles the journal refuses itself are counted in
 * svc_settle_outcomes_total. Real SQLite files, real HTTP on loopback.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SettlementJournal } from '../../src/journal/journal.ts';
import { DEFAULT_POLICY } from '../../src/journal/policy.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import { api } from '../helpers/contract.ts';
import { FAKE_ENVELOPE, FakeScheme } from '../helpers/fake-scheme.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { until } from '../helpers/svc-process.ts';
import { tempDir } from '../catalog/fixtures.ts';

const dirs: Array<{ cleanup: () => void }> = [];
const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const d of dirs) d.cleanup();
});

describe('the catalog database', () => {
  it('could not open at start (its directory missing): discovery 503, then 200 once it can open, without a restart', async () => {
    const t = tempDir('svc-reopen-');
    dirs.push(t);
    const dataDir = join(t.dir, 'not-yet');
    const server = await startTestServer({ config: testConfig({ DB_PATH: join(dataDir, 'svc.sqlite') }) });
    servers.push(server);
    const client = api(server.url);
    expect((await client.get('/discovery/search?query=weather')).status).toBe(503);
    expect((await client.get('/discovery/resources')).status).toBe(503);
    mkdirSync(dataDir);
    // Tried again at most once a second, on a request.
    const answer = await until('discovery answers 200', async () => {
      const res = await client.get('/discovery/resources');
      return res.status === 200 ? res : undefined;
    });
    expect(answer.body).toMatchObject({ items: [], pagination: { total: 0 } });
    expect((await client.get('/discovery/search?query=weather')).status).toBe(200);
  });
});

describe('settle-outcome metrics', () => {
  it('a settle the journal refuses itself (svc_journal_unavailable, the scheme never called) is counted', async () => {
    const t = tempDir('svc-refusal-');
    dirs.push(t);
    const scheme = new FakeScheme();
    // A journal whose file cannot open: every settle is refused before the scheme is asked.
    const journal = new SettlementJournal({
      store: new SqliteJournalStore(join(t.dir, 'missing', 'journal.sqlite'), { openLater: true }),
      policy: DEFAULT_POLICY,
    });
    const server = await startTestServer({ scheme, journal });
    servers.push(server);
    const client = api(server.url);
    for (let i = 0; i < 2; i++) {
      const res = await client.post('/settle', FAKE_ENVELOPE);
      expect(res.body).toMatchObject({ success: false, errorReason: 'svc_journal_unavailable' });
    }
    expect(scheme.calls).not.toContain('settle');
    const metrics = (await client.get('/metrics')).text;
    expect(metrics).toMatch(/^svc_settle_outcomes_total\{network="stellar:testnet",code="svc_journal_unavailable"\} 2$/m);
  });
});
