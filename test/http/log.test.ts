/** The logger: JSON lines, secrets redacted by path, a loaded config logs without its keys. */
import { Writable } from 'node:stream';
import { Keypair } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger('info', sink) };
}

describe('createLogger', () => {
  it('redacts secret-named fields wherever they sit one level deep', () => {
    const { lines, logger } = capture();
    const seed = Keypair.random().secret();
    logger.info({ secret: seed, env: { SUBMITTER_SECRET: seed, FEE_BUMP_SECRET: seed }, seed }, 'x');
    expect(JSON.stringify(lines)).not.toContain(seed);
    expect(lines[0]).toMatchObject({ secret: '[redacted]', seed: '[redacted]', env: { SUBMITTER_SECRET: '[redacted]' } });
  });

  it('a logged config carries public addresses only', () => {
    const { lines, logger } = capture();
    const kp = Keypair.random();
    const config = loadConfig({ SUBMITTER_SECRET: kp.secret() });
    logger.info({ config }, 'config');
    expect(JSON.stringify(lines)).not.toContain(kp.secret());
    expect(JSON.stringify(lines)).toContain(kp.publicKey());
  });
});

describe('createLogger, nested names and bindings', () => {
  it('censors secret names one level deep in child bindings at any depth of the tree, without touching the caller object', () => {
    const { lines, logger } = capture();
    const seed = Keypair.random().secret();
    const env = { SUBMITTER_SECRET: seed, RPC_URL: 'http://x' };
    logger
      .child({ env })
      .child({ other: { seed } })
      .info({ list: { CLIENT_STELLAR_PRIVATE_KEY: seed } }, 'x');
    expect(JSON.stringify(lines)).not.toContain(seed);
    expect(lines[0]).toMatchObject({ env: { SUBMITTER_SECRET: '[redacted]', RPC_URL: 'http://x' }, other: { seed: '[redacted]' } });
    expect(env.SUBMITTER_SECRET).toBe(seed);
  });
});
