/**
 * SDK generators a client team would point at openapi.yaml (docs/SDK.md): openapi-typescript with
 * openapi-fetch, @hey-api/openapi-ts, orval and swagger-typescript-api each generate a client into
 * a fresh directory; the clients written against them (test/sdk/consumers/) are type-checked in
 * strict mode together with the generated code, then run against a live svc over HTTP: /supported,
 * a search, and a typed `exact` Stellar payment that /verify rejects with a scheme code.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { Outcome } from './consumers/payment.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPEC = join(ROOT, 'openapi.yaml');
const bin = (name: string) => realpathSync(join(ROOT, 'node_modules/.bin', name));
const node = (script: string, args: string[], cwd: string) =>
  run(process.execPath, [script, ...args], { cwd, timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } });

const GENERATORS: Record<string, (dir: string) => Promise<unknown>> = {
  'openapi-fetch': (dir) => node(bin('openapi-typescript'), [SPEC, '-o', join(dir, 'openapi-fetch/schema.d.ts')], dir),
  'hey-api': (dir) => node(bin('openapi-ts'), ['-i', SPEC, '-o', join(dir, 'hey-api')], dir),
  orval: (dir) => {
    const config = {
      svc: {
        input: { target: SPEC },
        output: { target: './orval/api.ts', client: 'fetch', override: { mutator: { path: './orval-fetch.ts', name: 'svcFetch' } } },
      },
    };
    writeFileSync(join(dir, 'orval.config.mjs'), `export default ${JSON.stringify(config)};\n`);
    return node(bin('orval'), ['--config', 'orval.config.mjs'], dir);
  },
  'swagger-typescript-api': (dir) =>
    node(
      bin('swagger-typescript-api'),
      ['generate', '--path', SPEC, '--output', join(dir, 'swagger-typescript-api'), '--name', 'api.ts'],
      dir,
    ),
};

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sdk-'));
  cpSync(join(ROOT, 'test/sdk/consumers'), dir, { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await Promise.all(Object.values(GENERATORS).map((generate) => generate(dir)));
  server = await startTestServer();
}, 180_000);

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('generated SDKs', () => {
  it('all four clients and their consumers type-check in strict mode', async () => {
    // The settings a bundler-based client project uses (hey-api's output needs Bundler resolution).
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2023', 'DOM', 'DOM.Iterable'],
        types: [],
        skipLibCheck: true,
      },
      include: ['*.ts', '*/**/*.ts'],
      exclude: ['node_modules'],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    // tsc prints its diagnostics on stdout and exits non-zero; a clean check prints nothing.
    const tsc = await node(join(ROOT, 'node_modules/typescript/bin/tsc'), ['-p', dir], dir).catch((err: Error & { stdout?: string }) => ({
      stdout: err.stdout || err.message,
    }));
    expect(tsc.stdout).toBe('');
  }, 120_000);

  it.each(Object.keys(GENERATORS))('%s: /supported, a search and a rejected typed payment against a live svc', async (name) => {
    const consumer = (await import(pathToFileURL(join(dir, `${name}.ts`)).href)) as { exercise: (baseUrl: string) => Promise<Outcome> };
    const outcome = await consumer.exercise(server.url);
    expect(outcome).toEqual({
      kinds: ['exact@stellar:testnet'],
      searchResults: 0,
      verifyStatus: 200,
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_malformed',
    });
  });
});
