/**
 * The MCP project's own conformance checks (@modelcontextprotocol/conformance, its server
 * scenarios) against svc's hosted POST /mcp on loopback, over real HTTP: the initialize handshake,
 * ping, logging/setLevel, tools/list and the DNS-rebinding protection (docs/MCP.md). Its other
 * scenarios exercise resources, prompts and tools an "everything" server has and svc does not.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SCENARIOS = ['server-initialize', 'ping', 'logging-set-level', 'tools-list', 'dns-rebinding-protection'];
const CLI = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** One scenario run by the conformance CLI (this Node: it needs 22 or later): its exit code and report. */
function scenario(name: string) {
  return new Promise<{ code: number; report: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'server', '--url', `${server.url}/mcp`, '--scenario', name],
      { timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, report: `${stdout}${stderr}` }),
    );
  });
}

it('passes the server scenarios of MCP conformance it is within scope of', async () => {
  const runs = await Promise.all(SCENARIOS.map(async (name) => ({ name, ...(await scenario(name)) })));
  for (const run of runs) {
    expect(run.report, run.name).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(run.code, run.report).toBe(0);
  }
}, 120_000);
