/**
 * Starts the real service (createService, src/service.ts) on an ephemeral loopback port for a
 * test, and stops it. Unless the test says otherwise: a silent logger, readiness with no checks,
 * the Stellar scheme built from the config and the catalog opened at its DB_PATH with the
 * busy-machine bounds (test/catalog/fixtures.ts BUSY_MACHINE_BOUNDS).
 *
 *   const server = await startTestServer({ scheme, catalog });   // config defaults: one random submitter
 *   afterAll(() => server.close());
 *   const res = await api(server.url).get('/health');
 */
import { Keypair } from '@stellar/stellar-sdk';
import { loadConfig, type Config } from '../../src/config.ts';
import type { RunningServer } from '../../src/http/app.ts';
import { loadContract, type ApiContract } from '../../src/http/contract.ts';
import { silentLogger } from '../../src/log.ts';
import { ReadinessProbe } from '../../src/ops/readiness.ts';
import type { PaymentScheme } from '../../src/scheme/types.ts';
import { createService, type Service, type ServiceOverrides } from '../../src/service.ts';
import { BUSY_MACHINE_BOUNDS } from '../catalog/fixtures.ts';

/** A valid config for tests; `env` overrides variables (a fresh random submitter by default). */
/**
 * An in-process service shares its event loop with the test (and often the devnet): the test's own
 * work would count as payment load and hold discovery, so these services never hold it
 * (DISCOVERY_YIELD_PERCENT 100); test/http/payment-priority.test.ts tests the gate.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    SUBMITTER_SECRET: Keypair.random().secret(),
    DB_PATH: ':memory:',
    DISCOVERY_YIELD_PERCENT: '100',
    LIVENESS_CHECKS_PER_MINUTE: '0',
    // A test asks its few loopback sellers many times; the tests of the outbound bound set it
    // (test/security/outbound.test.ts).
    PROBE_HOST_INTERVAL_SECONDS: '0',
    // The first settlement owns a listing, so a test's settlement of a made-up URL lists it at once;
    // the tests of ownership from the origin set `origin` (test/catalog/ownership-e2e.test.ts).
    LISTING_OWNERSHIP: 'first-settlement',
    ...env,
  });
}

export interface TestServerOptions extends ServiceOverrides {
  config?: Config;
  /** Shorthand for `schemes: [scheme]`. */
  scheme?: PaymentScheme;
}

export type TestServer = RunningServer & { config: Config; service: Service };

/**
 * One contract (openapi.yaml with its compiled request validators) for every service this process
 * starts: a service compiles the validators it checks after it listens (src/service.ts), about
 * 0.3 CPU-s each time, and a test file starts up to a few dozen services in a worker that runs
 * many files (vitest.config.ts `isolate: false`). The validators are pure functions of the same
 * document; a test that needs another contract passes `contract`.
 */
let sharedContract: ApiContract | undefined;

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const { config = testConfig(), scheme, ...overrides } = options;
  const service = createService(config, {
    logger: silentLogger(),
    contract: (sharedContract ??= loadContract()),
    readiness: new ReadinessProbe({ checks: {} }),
    catalogBounds: BUSY_MACHINE_BOUNDS,
    ...(scheme ? { schemes: [scheme] } : {}),
    ...overrides,
  });
  const running = await service.listen(0, '127.0.0.1');
  return { ...running, config, service, close: () => service.close() };
}
