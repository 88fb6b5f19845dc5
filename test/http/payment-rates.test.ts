/**
 * The optional per-client limits of POST /verify and POST /settle (VERIFY_RATE_PER_MINUTE,
 * SETTLE_RATE_PER_MINUTE): off by default; when set, the request past the limit is a 429 in the
 * route's own shape with `Retry-After`, checked against openapi.yaml, and nothing is verified.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

describe('POST /verify and POST /settle per-client limits', () => {
  let limited: TestServer;
  let open: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ config: testConfig({ VERIFY_RATE_PER_MINUTE: '3', SETTLE_RATE_PER_MINUTE: '2' }) });
    open = await startTestServer({ config: testConfig() });
  });
  afterAll(async () => {
    await limited?.close();
    await open?.close();
  });

  it('off by default: 30 malformed verifies from one client are all answered 400', async () => {
    for (let i = 0; i < 30; i++) expect((await api(open.url).post('/verify', {})).status).toBe(400);
  });

  it('VERIFY_RATE_PER_MINUTE=3: the 4th is 429 svc_rate_limited in the VerifyResponse shape with Retry-After', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api(limited.url).post('/verify', {})).status);
    expect(statuses).toEqual([400, 400, 400]);
    const refused = await api(limited.url).post('/verify', {});
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      isValid: false,
      invalidReason: 'svc_rate_limited',
      invalidMessage: expect.stringMatching(/VERIFY_RATE_PER_MINUTE/),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('SETTLE_RATE_PER_MINUTE=2: the 3rd is 429 svc_rate_limited in the SettleResponse shape with Retry-After', async () => {
    expect((await api(limited.url).post('/settle', {})).status).toBe(400);
    expect((await api(limited.url).post('/settle', {})).status).toBe(400);
    const refused = await api(limited.url).post('/settle', {});
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, transaction: '', errorReason: 'svc_rate_limited' });
    expect(refused.body.errorMessage).toMatch(/SETTLE_RATE_PER_MINUTE.*nothing was submitted/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
