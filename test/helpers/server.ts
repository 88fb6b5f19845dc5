/**
 * Starts the real Koa app on an ephemeral loopback port for a test, and stops it.
 *
 *   const server = await startTestServer({ scheme, catalog });   // config defaults: one random submitter
 *   afterAll(() => server.close());
 *   const res = await api(server.url).get('/health');
 */
import { Keypair } from '@stellar/stellar-sdk';
import { loadConfig, type Config } from '../../src/config.ts';
import { createApp, listen, type AppDeps, type RunningServer } from '../../src/http/app.ts';
import { silentLogger } from '../../src/log.ts';

/** A valid config for tests; `env` overrides variables (a fresh random submitter by default). */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ SUBMITTER_SECRET: Keypair.random().secret(), DB_PATH: ':memory:', ...env });
}

export async function startTestServer(deps: Partial<AppDeps> = {}): Promise<RunningServer & { config: Config }> {
  const config = deps.config ?? testConfig();
  const running = await listen(createApp({ logger: silentLogger(), ...deps, config }), 0, '127.0.0.1');
  return { ...running, config };
}
