/**
 * Configuration rules (README.md, Configuration): loadConfig in process for every rule, then the real
 * entry point spawned with bad environments (exit 78, one stderr line, no port bound, no secret)
 * and `npm start` with a valid one serving /health, /supported and /openapi.yaml.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { createSchemeFromConfig } from '../../src/chains/stellar/index.ts';
import { ConfigError, databaseUrl, loadConfig, signerAddresses, signingKeys } from '../../src/config.ts';
import { api } from '../helpers/contract.ts';
import { freePort } from '../helpers/svc-process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const seed = () => Keypair.random().secret();
/** A contract address (C…), as requirements name an asset. */
const asset = StrKey.encodeContract(Buffer.alloc(32, 7));
/** A syntactically plausible seed with a broken checksum. */
const badSeed = () => {
  const s = seed();
  return s.slice(0, 50) + (s[50] === 'A' ? 'B' : 'A') + s.slice(51);
};

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${Object.keys(env).join(',')}`);
}

describe('loadConfig', () => {
  it('defaults with only SUBMITTER_SECRET', () => {
    const kp = Keypair.random();
    const config = loadConfig({ SUBMITTER_SECRET: kp.secret() });
    expect(config).toEqual({
      network: 'stellar:testnet',
      rpcUrl: 'https://soroban-testnet.stellar.org',
      submitters: [kp.publicKey()],
      feeBumpAddress: null,
      channelAccounts: 0,
      channelFunder: null,
      port: 4021,
      dbPath: './data/svc.sqlite',
      postgres: null,
      feeMode: 'free',
      maxTransactionFeeStroops: 1_100_000,
      settleWaitSeconds: 60,
      logLevel: 'info',
      readyMinBalanceStroops: 50_000_000,
      readyMaxLedgerAgeSeconds: 30,
      headersTimeoutMs: 10000,
      requestTimeoutMs: 15000,
      maxConnectionsPerAddress: 256,
      maxConnections: null,
      discoveryYieldPercent: 80,
      listingTtlDays: 30,
      listingPurgeDays: 90,
      listingOwnership: 'origin',
      mcpRatePerMinute: 120,
    });
    expect(signingKeys(config).submitters[0]!.secret()).toBe(kp.secret());
    expect(JSON.stringify(config)).not.toContain(kp.secret());
  });

  it('reads every variable', () => {
    const [a, b, f] = [Keypair.random(), Keypair.random(), Keypair.random()];
    const config = loadConfig({
      NETWORK: 'stellar:pubnet',
      RPC_URL: 'http://127.0.0.1:8000/rpc',
      SUBMITTER_SECRET: ` ${a.secret()} , ${b.secret()} `,
      FEE_BUMP_SECRET: f.secret(),
      PORT: '65535',
      DB_PATH: '/tmp/x/svc.db',
      FEE_MODE: 'free',
      MAX_TRANSACTION_FEE_STROOPS: '1',
      LOG_LEVEL: 'debug',
      READY_MIN_BALANCE_STROOPS: '0',
      READY_MAX_LEDGER_AGE_SECONDS: '120',
      HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '3000',
      MAX_CONNECTIONS_PER_ADDRESS: '8',
      MAX_CONNECTIONS: '900',
      DISCOVERY_YIELD_PERCENT: '65',
      MCP_RATE_PER_MINUTE: '7',
    });
    expect(config).toMatchObject({
      network: 'stellar:pubnet',
      rpcUrl: 'http://127.0.0.1:8000/rpc',
      submitters: [a.publicKey(), b.publicKey()],
      feeBumpAddress: f.publicKey(),
      port: 65535,
      dbPath: '/tmp/x/svc.db',
      maxTransactionFeeStroops: 1,
      logLevel: 'debug',
      readyMinBalanceStroops: 0,
      readyMaxLedgerAgeSeconds: 120,
      headersTimeoutMs: 2000,
      requestTimeoutMs: 3000,
      maxConnectionsPerAddress: 8,
      maxConnections: 900,
      discoveryYieldPercent: 65,
      mcpRatePerMinute: 7,
    });
    expect(signerAddresses(config)).toEqual([a.publicKey(), b.publicKey(), f.publicKey()]);
    expect(createSchemeFromConfig(config).supported().signers).toEqual({ 'stellar:*': [a.publicKey(), b.publicKey(), f.publicKey()] });
    expect(JSON.stringify(config)).not.toMatch(/S[A-Z2-7]{55}/);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['SUBMITTER_SECRET', {}, /required/],
    ['READY_MAX_LEDGER_AGE_SECONDS', { READY_MAX_LEDGER_AGE_SECONDS: '0' }, /integer from 1/],
    ['READY_MIN_BALANCE_STROOPS', { READY_MIN_BALANCE_STROOPS: '5 XLM' }, /integer from 0/],
    ['READY_NETWORKS', { READY_NETWORKS: 'most' }, /must be one of any, all/],
    ['SUBMITTER_SECRET', { SUBMITTER_SECRET: '   ' }, /required/],
    ['SUBMITTER_SECRET', { SUBMITTER_SECRET: 'hunter2' }, /not a valid Stellar secret seed/],
    ['SUBMITTER_SECRET', { SUBMITTER_SECRET: Keypair.random().publicKey() }, /not a valid/],
    ['SUBMITTER_SECRET', { SUBMITTER_SECRET: `${seed()},` }, /entry 2 is empty/],
    ['NETWORK', { NETWORK: 'stellar:futurenet' }, /must be one of/],
    ['NETWORK', { NETWORK: 'testnet' }, /must be one of/],
    ['RPC_URL', { NETWORK: 'stellar:pubnet' }, /required when NETWORK is stellar:pubnet/],
    ['RPC_URL', { RPC_URL: 'not a url' }, /http\(s\) URL/],
    ['RPC_URL', { RPC_URL: 'ftp://rpc.example.org' }, /http\(s\) URL/],
    ['RPC_URL', { RPC_URL: 'https://user:pw@rpc.example.org' }, /credentials/],
    ['FEE_BUMP_SECRET', { FEE_BUMP_SECRET: 'nope' }, /not a valid Stellar secret seed/],
    ['FEE_BUMP_SECRET', { FEE_BUMP_SECRET: `${seed()},${seed()}` }, /single/],
    ['PORT', { PORT: '0' }, /integer from 1 to 65535/],
    ['MCP_RATE_PER_MINUTE', { MCP_RATE_PER_MINUTE: '0' }, /integer from 1 to 100000/],
    ['PORT', { PORT: '65536' }, /integer from 1 to 65535/],
    ['PORT', { PORT: '80.5' }, /integer/],
    ['PORT', { PORT: 'http' }, /integer/],
    ['PORT', { PORT: '-1' }, /integer/],
    ['FEE_MODE', { FEE_MODE: 'paid' }, /only "free"/],
    ['MAX_TRANSACTION_FEE_STROOPS', { MAX_TRANSACTION_FEE_STROOPS: '0' }, /integer from 1/],
    ['MAX_TRANSACTION_FEE_STROOPS', { MAX_TRANSACTION_FEE_STROOPS: '-5' }, /integer/],
    ['MAX_TRANSACTION_FEE_STROOPS', { MAX_TRANSACTION_FEE_STROOPS: '1e5' }, /integer/],
    ['SETTLE_WAIT_SECONDS', { SETTLE_WAIT_SECONDS: '301' }, /integer from 1 to 300/],
    ['MAX_TRANSACTION_FEE_STROOPS', { MAX_TRANSACTION_FEE_STROOPS: '99999999999999999999' }, /integer/],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }, /must be one of/],
    ['HEADERS_TIMEOUT_MS', { HEADERS_TIMEOUT_MS: '10' }, /integer from 1000/],
    ['REQUEST_TIMEOUT_MS', { HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '4000' }, /at least HEADERS_TIMEOUT_MS/],
    ['MAX_CONNECTIONS_PER_ADDRESS', { MAX_CONNECTIONS_PER_ADDRESS: '0' }, /integer from 1/],
    ['MAX_CONNECTIONS', { MAX_CONNECTIONS: '0' }, /integer from 1 to 1000000/],
    ['MAX_CONNECTIONS', { MAX_CONNECTIONS: 'many' }, /integer from 1/],
    ['MAX_CONNECTIONS', { MAX_CONNECTIONS: '2000000' }, /integer from 1/],
    ['DISCOVERY_YIELD_PERCENT', { DISCOVERY_YIELD_PERCENT: '101' }, /integer from 1/],
    ['ALLOW_PRIVATE_TARGETS', { ALLOW_PRIVATE_TARGETS: 'garbage' }, /"garbage" is not an IP address or CIDR range/],
    ['ALLOW_PRIVATE_TARGETS', { ALLOW_PRIVATE_TARGETS: '127.0.0.0/8,10.0.0.0/33' }, /"10.0.0.0\/33" is not an IP address or CIDR/],
    ['ALLOW_PRIVATE_TARGETS', { ALLOW_PRIVATE_TARGETS: '127.0.0.0/8,' }, /"" is not an IP address or CIDR/],
    ['ALLOW_PRIVATE_TARGETS', { ALLOW_PRIVATE_TARGETS: 'localhost' }, /not an IP address or CIDR/],
    ['PAYMENT_MIN_AMOUNTS', { PAYMENT_MIN_AMOUNTS: 'USDC=100' }, /entry 1: the asset must be a Stellar contract address/],
    [
      'PAYMENT_MIN_AMOUNTS',
      { PAYMENT_MIN_AMOUNTS: `${asset}=1,${Keypair.random().publicKey()}=100` },
      /entry 2: the asset must be a Stellar contract/,
    ],
    ['PAYMENT_MIN_AMOUNTS', { PAYMENT_MIN_AMOUNTS: `${asset.toLowerCase()}=100` }, /must be a Stellar contract address/],
    ['PAYMENT_MIN_AMOUNTS', { PAYMENT_MIN_AMOUNTS: `${asset.slice(0, -1)}A=100` }, /must be a Stellar contract address/],
    ['PAYMENT_MIN_AMOUNTS', { PAYMENT_MIN_AMOUNTS: `${asset}=1, ${asset}=2` }, /entry 2 repeats the asset/],
    ['PAYMENT_MIN_AMOUNTS', { PAYMENT_MIN_AMOUNTS: `${asset}=ten` }, /non-negative integers/],
  ])('%s rule: %j', (variable, env, reason) => {
    const withSubmitter = 'SUBMITTER_SECRET' in env || variable === 'SUBMITTER_SECRET' ? env : { SUBMITTER_SECRET: seed(), ...env };
    const err = configError(withSubmitter);
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`${variable}: `)).toBe(true);
    expect(err.message).toMatch(reason);
  });

  it('DATABASE_URL selects Postgres; the config shows it without credentials and a bad one is refused without echo', () => {
    const url = 'postgres://svc:s3cret-pw@db.internal:5433/svc';
    const config = loadConfig({ SUBMITTER_SECRET: seed(), DATABASE_URL: url });
    expect(config.postgres).toBe('postgres://db.internal:5433/svc');
    expect(databaseUrl(config)).toBe(url);
    expect(JSON.stringify(config)).not.toContain('s3cret-pw');
    expect(databaseUrl(loadConfig({ SUBMITTER_SECRET: seed() }))).toBeNull();
    expect(loadConfig({ SUBMITTER_SECRET: seed(), DATABASE_URL: 'postgresql://h/d' }).postgres).toBe('postgresql://h/d');
    for (const bad of ['mysql://u:s3cret-pw@h/d', 'postgres://u:s3cret-pw@h', 'not a url s3cret-pw', 'postgres://u:s3cret-pw@/d']) {
      const error = configError({ SUBMITTER_SECRET: seed(), DATABASE_URL: bad });
      expect(error.message).toMatch(/^DATABASE_URL: /);
      expect(error.message).not.toContain('s3cret-pw');
    }
  });

  it('rejects duplicate submitters and a fee-bump equal to a submitter', () => {
    const s = seed();
    expect(configError({ SUBMITTER_SECRET: `${s},${seed()},${s}` }).message).toMatch(/^SUBMITTER_SECRET: entry 3 duplicates/);
    expect(configError({ SUBMITTER_SECRET: `${seed()},${s}`, FEE_BUMP_SECRET: s }).message).toMatch(/^FEE_BUMP_SECRET: must differ/);
  });

  it('never quotes any part of a bad secret', () => {
    for (const [variable, value] of [
      ['SUBMITTER_SECRET', badSeed()],
      ['SUBMITTER_SECRET', `${seed()},${badSeed()}`],
      ['FEE_BUMP_SECRET', badSeed()],
    ] as const) {
      const env: Record<string, string> =
        variable === 'FEE_BUMP_SECRET' ? { SUBMITTER_SECRET: seed(), FEE_BUMP_SECRET: value } : { SUBMITTER_SECRET: value };
      const message = configError(env).message;
      for (let i = 0; i + 6 <= value.length; i++) expect(message).not.toContain(value.slice(i, i + 6));
    }
  });

  it('never echoes a secret seed put in the wrong variable, whichever it is', () => {
    for (const variable of ['PORT', 'LOG_LEVEL', 'NETWORK', 'FEE_MODE', 'MAX_TRANSACTION_FEE_STROOPS', 'RPC_URL']) {
      for (const value of [seed(), badSeed(), seed().slice(0, 30), seed().toLowerCase()]) {
        const message = configError({ SUBMITTER_SECRET: seed(), [variable]: value }).message;
        expect(message.startsWith(`${variable}: `)).toBe(true);
        for (let i = 0; i + 8 <= value.length; i++) expect(message).not.toContain(value.slice(i, i + 8));
      }
    }
    // A seed pasted as a per-asset minimum's key or as an allow-list entry is not quoted either.
    for (const value of [seed(), badSeed()]) {
      for (const [variable, setting] of [
        ['PAYMENT_MIN_AMOUNTS', `${value}=5`],
        ['PAYMENT_MIN_AMOUNTS', `${asset}=1,${value}=5`],
        ['ALLOW_PRIVATE_TARGETS', `127.0.0.1,${value}`],
      ]) {
        const message = configError({ SUBMITTER_SECRET: seed(), [variable!]: setting! }).message;
        expect(message.startsWith(`${variable}: `)).toBe(true);
        for (let i = 0; i + 8 <= value.length; i++) expect(message).not.toContain(value.slice(i, i + 8));
      }
    }
    // Ordinary mistakes are still quoted, so the operator sees what was wrong.
    expect(configError({ SUBMITTER_SECRET: seed(), LOG_LEVEL: 'verbose' }).message).toContain('"verbose"');
  });
});

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

/**
 * Runs the entry point `npm start` runs (dist/main.js, current: the global setup builds it) under
 * this Node (24) with a clean environment. From dist/ it fails in about 0.5 s; from source under
 * tsx it took 2–4 s each.
 */
function runMain(env: Record<string, string>) {
  return spawnSync(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('the entry point (dist/main.js) with an invalid configuration', () => {
  it.each<[string, (port: number) => Record<string, string>]>([
    ['SUBMITTER_SECRET', (port) => ({ PORT: String(port) })],
    ['SUBMITTER_SECRET', (port) => ({ PORT: String(port), SUBMITTER_SECRET: badSeed() })],
    ['FEE_MODE', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), FEE_MODE: 'dynamic' })],
    ['RPC_URL', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), NETWORK: 'stellar:pubnet' })],
    ['DB_PATH', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), DB_PATH: join(fileInTheWay(), 'sub', 'svc.sqlite') })],
    ['ALLOW_PRIVATE_TARGETS', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), ALLOW_PRIVATE_TARGETS: 'garbage' })],
    ['ALLOW_PRIVATE_TARGETS', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), ALLOW_PRIVATE_TARGETS: `10.0.0.0/8,${seed()}` })],
    ['PAYMENT_MIN_AMOUNTS', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), PAYMENT_MIN_AMOUNTS: 'USDC=100' })],
    ['PAYMENT_MIN_AMOUNTS', (port) => ({ PORT: String(port), SUBMITTER_SECRET: seed(), PAYMENT_MIN_AMOUNTS: `${asset}=1,${seed()}=100` })],
  ])('%s → exit 78, one line naming it, no port bound', async (variable, makeEnv) => {
    const port = await freePort();
    const env = makeEnv(port);
    const result = runMain(env);
    expect(result.status).toBe(78);
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^svc: invalid configuration: ${variable}: \\S`));
    expect(result.stdout).toBe('');
    // Every seed in the environment, whichever variable holds it (broken checksums included).
    for (const value of Object.values(env).flatMap((v) => v.match(/S[A-Z2-7]{55}/g) ?? [])) {
      for (let i = 0; i + 6 <= value.length; i++) expect(result.stderr).not.toContain(value.slice(i, i + 6));
    }
    expect(await portIsFree(port)).toBe(true);
  });
});

describe('the entry point (dist/main.js): every start-up failure in one line each', () => {
  it.each<[string, Record<string, string>, string[]]>([
    ['two invalid variables', { SUBMITTER_SECRET: seed(), PORT: 'abc', LOG_LEVEL: 'loud' }, ['PORT', 'LOG_LEVEL']],
    [
      'an invalid seed and two more',
      { SUBMITTER_SECRET: badSeed(), PORT: '0', FEE_MODE: 'dynamic' },
      ['SUBMITTER_SECRET', 'PORT', 'FEE_MODE'],
    ],
    ['a missing seed and a bad port', { PORT: '70000' }, ['SUBMITTER_SECRET', 'PORT']],
  ])('%s → exit 78, one line per variable', (_name, env, variables) => {
    const result = runMain(env);
    expect(result.status).toBe(78);
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines.map((l) => /^svc: invalid configuration: ([A-Z_]+): \S/.exec(l)?.[1])).toEqual(variables);
    for (const value of Object.values(env).flatMap((v) => v.match(/S[A-Z2-7]{55}/g) ?? []))
      expect(result.stderr).not.toContain(value.slice(0, 8));
  });

  it('npm start without a seed says where one comes from', () => {
    const result = runMain({ PORT: '1' });
    expect(result.status).toBe(78);
    expect(result.stderr.trim()).toMatch(
      /^svc: invalid configuration: SUBMITTER_SECRET: is required: the secret seed \(S…\) of a funded account.*https:\/\/lab\.stellar\.org\/account\/create \(Friendbot\).*`npm run dev`/,
    );
  });

  it('a DB_PATH under /proc/<a pid that is gone>/ → exit 78 at once (no mkdir loop)', () => {
    const started = Date.now();
    const result = runMain({ SUBMITTER_SECRET: seed(), PORT: '1', DB_PATH: '/proc/4194304/gone/svc.sqlite' });
    expect(result.status).toBe(78);
    expect(result.stderr.trim()).toMatch(/^svc: invalid configuration: DB_PATH: parent directory cannot be created \(ENOENT\)$/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it.each<[string, () => string, RegExp]>([
    ['a path under /proc', () => '/proc/svc.sqlite', /^\/proc\/svc\.sqlite cannot be created \(ENOENT\)$/],
    ['/dev/null', () => '/dev/null', /^\/dev\/null is not a regular file/],
    ['a directory', () => mkdtempSync(join(tmpdir(), 'svc-dir-')), /is a directory, not a database file$/],
    ['a file that is not SQLite', () => textFile('svc.sqlite', 'not a database\n'.repeat(100)), /\/svc\.sqlite is not an SQLite database$/],
  ])('a DB_PATH that cannot hold the database (%s) → exit 78 naming the path', async (_name, dbPath, reason) => {
    const port = await freePort();
    const path = dbPath();
    const result = runMain({ SUBMITTER_SECRET: seed(), PORT: String(port), DB_PATH: path });
    expect(result.status).toBe(78);
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc: invalid configuration: DB_PATH: /);
    expect(lines[0]!.replace('svc: invalid configuration: DB_PATH: ', '')).toMatch(reason);
    expect(lines[0]).toContain(path);
    expect(await portIsFree(port)).toBe(true);
  });

  it('a port another process holds → exit 75, one line naming the port', async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '0.0.0.0', done));
    const port = (holder.address() as { port: number }).port;
    try {
      const dir = mkdtempSync(join(tmpdir(), 'svc-busy-'));
      const result = runMain({
        SUBMITTER_SECRET: seed(),
        PORT: String(port),
        DB_PATH: join(dir, 'svc.sqlite'),
        LOG_LEVEL: 'warn',
        RPC_URL: 'http://127.0.0.1:9/',
      });
      expect(result.status).toBe(75);
      expect(result.stderr.trim().split('\n')).toEqual([
        `svc: port ${port} is in use by another process; stop it or set PORT to a free port`,
      ]);
    } finally {
      holder.close();
    }
  });

  it('a refused start leaves nothing behind: no database file or directory it created; an existing database stays', async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '0.0.0.0', done));
    const port = (holder.address() as { port: number }).port;
    const env = (dbPath: string) => ({ SUBMITTER_SECRET: seed(), PORT: String(port), DB_PATH: dbPath, RPC_URL: 'http://127.0.0.1:9/' });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'svc-refused-'));
      expect(runMain(env(join(dir, 'nested', 'deeper', 'svc.sqlite'))).status).toBe(75);
      expect(readdirSync(dir)).toEqual([]);
      // A database of an earlier run is the operator's: a refused start keeps it, with what it holds.
      const existing = join(dir, 'svc.sqlite');
      const db = new DatabaseSync(existing);
      db.exec('CREATE TABLE kept (x); INSERT INTO kept VALUES (1)');
      db.close();
      expect(runMain(env(existing)).status).toBe(75);
      const again = new DatabaseSync(existing);
      expect(again.prepare('SELECT x FROM kept').all()).toEqual([{ x: 1 }]);
      again.close();
    } finally {
      holder.close();
    }
  });
});

/** A file holding `text`. */
function textFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-cfg-')), name);
  writeFileSync(file, text);
  return file;
}

/** A regular file, so that a directory cannot be created beneath it. */
function fileInTheWay(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-cfg-')), 'file');
  writeFileSync(file, 'x');
  return file;
}

describe('npm start with a valid configuration', () => {
  it('creates the DB directory and serves /health, /supported and /openapi.yaml on PORT', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
    const dbPath = join(dir, 'nested', 'deeper', 'svc.sqlite');
    const kp = Keypair.random();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), SUBMITTER_SECRET: kp.secret(), DB_PATH: dbPath, LOG_LEVEL: 'info' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    try {
      const base = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 30_000;
      while (!output.includes('svc listening')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`svc did not start: ${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const client = api(base);
      const health = await client.get('/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', port, submitters: [kp.publicKey()] });
      expect(health.text).not.toContain(dbPath);
      const supported = await client.get('/supported');
      expect(supported.body.signers['stellar:*']).toEqual([kp.publicKey()]);
      const doc = await client.get('/openapi.yaml');
      expect(doc.text).toContain('openapi: 3.1.0');
      expect(existsSync(join(dir, 'nested', 'deeper'))).toBe(true);
      // The access log line is JSON with the request's route and status: written after the answer, so it may reach this
      // pipe after the answer does (a busy machine).
      const logged = Date.now() + 10_000;
      while (!/"route":"GET \/health".*"status":200/.test(output) && Date.now() < logged) await new Promise((r) => setTimeout(r, 50));
      expect(output).toMatch(/"route":"GET \/health".*"status":200/);
      expect(output).not.toContain(kp.secret());
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
