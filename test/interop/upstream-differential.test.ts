/**
 * svc against the upstream scheme (docs/SCHEME.md "Where svc and upstream disagree"): the same
 * generated payments, valid ones and one defect each from the contract's list, go to svc's
 * POST /verify and to @x402/stellar 2.9.0's facilitator-side ExactStellarScheme.verify, both on
 * one devnet. Their verdicts (valid, or the code) are compared; every disagreement must be one of
 * DISAGREEMENTS, each listed in docs/SCHEME.md with the clause that decides it. A new one fails.
 * Payments are signed by the stock 2.9.0 client (address credentials, which both accept); the
 * amounts come from a seeded generator (the seed is printed). Certificates and DNS: the named
 * boundary of stock-clients.test.ts.
 */
import { readFileSync } from 'node:fs';
import { xdr } from '@stellar/stellar-sdk';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as ExactClient } from '@x402/stellar/exact/client';
import { ExactStellarScheme as ExactFacilitator } from '@x402/stellar/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet, type DevAccount } from '../../src/devnet/index.ts';
import { expectConsole } from '../helpers/console.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

type Verdict = string; // 'valid' or the code

/**
 * The known disagreements: case name → [svc's verdict, upstream's]. Each is a row of docs/SCHEME.md
 * "Where svc and upstream disagree"; the test checks that table names every one.
 */
const DISAGREEMENTS: Record<string, [Verdict, Verdict]> = {
  'x402 version 1': ['svc_unsupported_x402_version', 'invalid_x402_version'],
  'unsupported scheme': ['svc_unsupported_kind', 'unsupported_scheme'],
  'unknown network': ['svc_unsupported_kind', 'invalid_network'],
  // Depends on the ledger time each side estimates, so it may also agree (see docs/SCHEME.md).
  'expiry too far': ['valid', 'invalid_exact_stellar_signature_expiration_too_far'],
};
/** Disagreements that depend on an estimate, not on a rule: allowed, not required. */
const ESTIMATE_DEPENDENT = new Set(['expiry too far']);

let devnet: Devnet;
let offline: OfflineHttps;
let svc: TestServer;
let upstream: ExactFacilitator;
let payer: DevAccount;
let payee: DevAccount;
let other: DevAccount;
let submitter: DevAccount;
const seed = Number(process.env.DIFFERENTIAL_SEED ?? Date.now() % 1_000_000);
let state = seed;
/** A small seeded generator (mulberry32): the amounts of the generated payments. */
function random(): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

beforeAll(async () => {
  console.log(`upstream-differential: seed ${seed} (DIFFERENTIAL_SEED=${seed} repeats it)`);
  // 5 s ledgers, as on the real network: both sides then bound an authorization's expiry by the same ledger time.
  devnet = await startDevnet({ ledgerMs: 5000, https: true });
  offline = trustCertAndBlockDns(devnet.caCertPem!);
  payer = await devnet.createAccount({ usdc: 1_000n * 10_000_000n });
  payee = await devnet.createAccount();
  other = await devnet.createAccount();
  submitter = await devnet.createAccount({ usdcTrustline: false });
  svc = await startTestServer({ config: testConfig({ RPC_URL: devnet.rpcUrl, SUBMITTER_SECRET: submitter.secret }) });
  upstream = new ExactFacilitator([createEd25519Signer(submitter.secret, 'stellar:testnet')], {
    rpcConfig: { url: devnet.httpsRpcUrl! },
    areFeesSponsored: true,
  });
}, 60_000);

afterAll(async () => {
  await svc?.close();
  offline?.restore();
  await devnet?.stop();
});

function requirements(amount: string, over: Record<string, unknown> = {}) {
  return {
    scheme: 'exact',
    network: 'stellar:testnet' as const,
    asset: devnet.usdc.contractId,
    amount,
    payTo: payee.publicKey,
    maxTimeoutSeconds: 60,
    extra: { areFeesSponsored: true },
    ...over,
  };
}

/** A payment the stock client signs for `req`. */
async function signed(req: ReturnType<typeof requirements>) {
  const client = new ExactClient(createEd25519Signer(payer.secret, 'stellar:testnet'), { url: devnet.httpsRpcUrl! });
  return { ...(await client.createPaymentPayload(2, req)), accepted: req };
}

/** The transaction with one byte of the payer's signature flipped. */
function flipSignature(envelopeB64: string): string {
  const env = xdr.TransactionEnvelope.fromXdr(envelopeB64, 'base64');
  if (env.type !== 'envelopeTypeTx') throw new Error('expected a v1 envelope');
  const body = env.v1.tx.operations[0]!.body;
  if (body.type !== 'invokeHostFunction') throw new Error('expected invokeHostFunction');
  const credentials = body.invokeHostFunctionOp.auth[0]!.credentials;
  if (credentials.type !== 'sorobanCredentialsAddress') throw new Error('expected address credentials');
  const signature = credentials.address.signature;
  const map = signature.type === 'scvVec' ? signature.vec![0]! : null;
  if (!map || map.type !== 'scvMap') throw new Error('expected a signature map');
  for (const e of map.map!) {
    if (e.key.type === 'scvSymbol' && String(e.key.sym) === 'signature' && e.val.type === 'scvBytes') {
      const b = Uint8Array.from(e.val.bytes.toBytes());
      b[10]! ^= 1;
      (e as { val: xdr.ScVal }).val = xdr.ScVal.scvBytes(b);
    }
  }
  return env.toXdr('base64');
}

interface Case {
  name: string;
  payload: Record<string, unknown>;
  requirements: Record<string, unknown>;
}

/** One valid payment and each single defect of the contract's list, built from a fresh signed payment. */
async function cases(): Promise<Case[]> {
  const amount = String(1 + Math.floor(random() * 5_000_000));
  const req = requirements(amount);
  const pay = await signed(req);
  const tx = (pay.payload as { transaction: string }).transaction;
  const withTx = (transaction: string) => ({ ...pay, payload: { transaction } });
  const moved = (over: Record<string, unknown>) => {
    const r = { ...req, ...over };
    return { name: '', payload: { ...pay, accepted: r }, requirements: r };
  };
  return [
    { name: 'valid', payload: pay, requirements: req },
    { ...moved({ amount: String(BigInt(amount) + 1n) }), name: 'wrong amount' },
    { ...moved({ payTo: other.publicKey }), name: 'wrong recipient' },
    { ...moved({ asset: devnet.customToken.contractId }), name: 'wrong asset' },
    { name: 'x402 version 1', payload: { ...pay, x402Version: 1 }, requirements: req },
    { ...moved({ scheme: 'upto' }), name: 'unsupported scheme' },
    { name: 'network mismatch', payload: { ...pay, accepted: { ...req, network: 'stellar:pubnet' } }, requirements: req },
    { ...moved({ network: 'stellar:futurenet' }), name: 'unknown network' },
    { name: 'malformed transaction', payload: withTx('AAAA'), requirements: req },
    { name: 'bad signature', payload: withTx(flipSignature(tx)), requirements: req },
    { ...moved({ maxTimeoutSeconds: 1 }), name: 'expiry too far' },
  ];
}

const verdictOf = (r: { isValid: boolean; invalidReason?: string }): Verdict => (r.isValid ? 'valid' : String(r.invalidReason));

describe('svc /verify against @x402/stellar 2.9.0 ExactStellarScheme.verify on the devnet', () => {
  it('agrees on every generated payment except the documented disagreements', async () => {
    const seen: Record<string, [Verdict, Verdict]> = {};
    for (let round = 0; round < 2; round++) {
      for (const c of await cases()) {
        const body = { x402Version: 2, paymentPayload: c.payload, paymentRequirements: c.requirements };
        const ours = await fetch(`${svc.url}/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<{ isValid: boolean; invalidReason?: string }>);
        const theirs = await expectConsole('error', /Simulation error|error/i, () =>
          upstream.verify(c.payload as never, c.requirements as never).catch((err: unknown) => ({
            isValid: false,
            invalidReason: `threw: ${String(err).slice(0, 60)}`,
          })),
        );
        const pair: [Verdict, Verdict] = [verdictOf(ours), verdictOf(theirs.result)];
        if (pair[0] !== pair[1]) seen[c.name] = pair;
        if (c.name === 'valid') expect(pair).toEqual(['valid', 'valid']);
      }
    }
    const required = Object.fromEntries(Object.entries(DISAGREEMENTS).filter(([name]) => !ESTIMATE_DEPENDENT.has(name)));
    const unexplained = Object.fromEntries(
      Object.entries(seen).filter(([name, pair]) => !ESTIMATE_DEPENDENT.has(name) || String(pair) !== String(DISAGREEMENTS[name])),
    );
    expect({ ...unexplained }, `seed ${seed}`).toEqual(required);
  }, 120_000);

  it('docs/SCHEME.md lists every disagreement', () => {
    const doc = readFileSync(new URL('../../docs/SCHEME.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Where svc and upstream disagree'));
    expect(section.length).toBeGreaterThan(100);
    for (const [name, [ours, theirs]] of Object.entries(DISAGREEMENTS)) {
      const row = section.split('\n').find((l) => l.startsWith(`| ${name} `));
      expect(row, name).toBeDefined();
      expect(row).toContain(ours);
      expect(row).toContain(theirs);
    }
  });
});
