/**
 * svc against the upstream scheme (docs/SCHEME.md "Where svc and upstream disagree"): the same
 * generated payments, valid ones and one defect each from the contract's list, go to svc's
 * POST /verify and to @x402/stellar 2.9.0's facilitator-side ExactStellarScheme.verify, both on
 * one devnet. Their verdicts (valid, or the code) are compared; every disagreement must be one of
 * DISAGREEMENTS, each listed in docs/SCHEME.md with the clause that decides it. A new one fails.
 * Each defect also carries the contract's code, which svc must answer. Payments are signed by the
 * stock 2.9.0 client (address credentials, which both accept); a defect in an authorization is
 * re-signed with the payer's key; a replay is settled through svc first. The amounts come from a
 * seeded generator (the seed is printed). Certificates and DNS: the named boundary of
 * stock-clients.test.ts.
 */
import { readFileSync } from 'node:fs';
import { Address, Asset, Keypair, Operation, authorizeEntry, xdr } from '@stellar/stellar-sdk';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as ExactClient } from '@x402/stellar/exact/client';
import { ExactStellarScheme as ExactFacilitator } from '@x402/stellar/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTransfer } from '../../src/chains/stellar/exact/buyer.ts';
import { startDevnet, type Devnet, type DevAccount } from '../../src/devnet/index.ts';
import { expectConsole } from '../helpers/console.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { sourceAccountEntry, transferArgs, transferInvocation, unsignedEntry } from '../scheme/fixtures.ts';

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
  'no authorization entries': ['invalid_exact_stellar_payload_no_auth_entries', 'invalid_exact_stellar_payload_fee_below_minimum'],
  'client fee bid above the ceiling': ['valid', 'invalid_exact_stellar_payload_fee_exceeds_maximum'],
  'client fee bid below the resource fee': ['valid', 'invalid_exact_stellar_payload_fee_below_minimum'],
};
/** Disagreements that depend on an estimate, not on a rule: allowed, not required. */
const ESTIMATE_DEPENDENT = new Set(['expiry too far']);

let devnet: Devnet;
let offline: OfflineHttps;
let svc: TestServer;
let upstream: ExactFacilitator;
/** Both sides with the same fee ceiling, below any transfer's resource fee. */
let lowCeilingSvc: TestServer;
let lowCeilingUpstream: ExactFacilitator;
const LOW_CEILING_STROOPS = 1_000;
let payer: DevAccount;
let payee: DevAccount;
let other: DevAccount;
/** A payer with a USDC trustline and no USDC. */
let broke: DevAccount;
let submitter: DevAccount;
/** svc's signing address, as GET /supported lists it. */
let facilitator: string;
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
  broke = await devnet.createAccount();
  submitter = await devnet.createAccount({ usdcTrustline: false });
  svc = await startTestServer({ config: testConfig({ RPC_URL: devnet.rpcUrl, SUBMITTER_SECRET: submitter.secret }) });
  const facilitatorOf = (maxTransactionFeeStroops?: number) =>
    new ExactFacilitator([createEd25519Signer(submitter.secret, 'stellar:testnet')], {
      rpcConfig: { url: devnet.httpsRpcUrl! },
      areFeesSponsored: true,
      ...(maxTransactionFeeStroops ? { maxTransactionFeeStroops } : {}),
    });
  upstream = facilitatorOf();
  lowCeilingSvc = await startTestServer({
    config: testConfig({
      RPC_URL: devnet.rpcUrl,
      SUBMITTER_SECRET: submitter.secret,
      MAX_TRANSACTION_FEE_STROOPS: String(LOW_CEILING_STROOPS),
    }),
  });
  lowCeilingUpstream = facilitatorOf(LOW_CEILING_STROOPS);
  const supported = (await fetch(`${svc.url}/supported`).then((r) => r.json())) as { signers: Record<string, string[]> };
  facilitator = Object.values(supported.signers).flat()[0]!;
}, 60_000);

afterAll(async () => {
  await svc?.close();
  await lowCeilingSvc?.close();
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
  /** The contract's code for the defect: what svc must answer (a broken builder would not reach it). */
  code?: string;
  /** Judged by the pair whose fee ceiling is LOW_CEILING_STROOPS. */
  lowCeiling?: boolean;
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };
interface Parts {
  tx: Writable<xdr.Transaction>;
  op: Writable<xdr.Operation>;
  call: Writable<xdr.InvokeContractArgs>;
  auth: xdr.SorobanAuthorizationEntry[];
  entry: xdr.SorobanAuthorizationEntry;
}

/**
 * The highest fee bid upstream's default ceiling accepts. upstream judges the client's bid (at least
 * the resource fee, at most its ceiling), svc derives its own: a changed envelope bids this, so
 * that a larger envelope's resource fee does not stop upstream before the defect's own check.
 */
const UPSTREAM_MAX_BID = 50_000;

/** The stock payment's envelope after `change`: the buyer signs only its authorization entry, never the envelope. */
async function changed(envelopeB64: string, change: (p: Parts) => unknown): Promise<string> {
  const env = xdr.TransactionEnvelope.fromXdr(envelopeB64, 'base64');
  if (env.type !== 'envelopeTypeTx') throw new Error('expected a v1 envelope');
  const tx: Writable<xdr.Transaction> = env.v1.tx;
  tx.fee = UPSTREAM_MAX_BID;
  const op = tx.operations[0]!;
  if (op.body.type !== 'invokeHostFunction') throw new Error('expected invokeHostFunction');
  const invoke = op.body.invokeHostFunctionOp;
  if (invoke.hostFunction.type !== 'hostFunctionTypeInvokeContract') throw new Error('expected a contract call');
  await change({ tx, op, call: invoke.hostFunction.invokeContract, auth: invoke.auth, entry: invoke.auth[0]! });
  return env.toXdr('base64');
}

/** The address credentials of the stock client's entry (the classic arm, which both sides accept). */
function credentialsOf(entry: xdr.SorobanAuthorizationEntry): Writable<xdr.SorobanAddressCredentials> {
  if (entry.credentials.type !== 'sorobanCredentialsAddress') throw new Error('expected address credentials');
  return entry.credentials.address;
}

/**
 * An entry for `invocation` signed by `key` under the classic address-credential arm: 2.9.0's SDK
 * cannot decode CAP-71's AddressV2, which the SDK's authorizeInvocation now signs.
 */
function signedEntry(key: Keypair, invocation: xdr.SorobanAuthorizedInvocation, expiration: number) {
  return authorizeEntry(unsignedEntry(key.publicKey(), invocation), key, expiration, devnet.networkPassphrase);
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
  const defect = async (name: string, code: string, change: (p: Parts) => unknown): Promise<Case> => ({
    name,
    code: code === 'valid' ? code : `invalid_exact_stellar_payload_${code}`,
    payload: withTx(await changed(tx, change)),
    requirements: req,
  });
  const payerKey = Keypair.fromSecret(payer.secret);
  const account = (publicKey: string) => Keypair.fromPublicKey(publicKey).xdrMuxedAccount();
  const invocation = (p: Parts) => p.entry.rootInvocation;
  const expiry = (p: Parts) => credentialsOf(p.entry).signatureExpirationLedger;
  // A transfer from a payer without USDC, signed by that payer (the stock client refuses to build one).
  const brokeKey = Keypair.fromSecret(broke.secret);
  const brokeCall = transferInvocation(req.asset, transferArgs(broke.publicKey, req.payTo, BigInt(amount)));
  const brokeEntry = await signedEntry(brokeKey, brokeCall, devnet.latestLedger().sequence + 10);
  const brokeTx = buildTransfer(req, broke.publicKey, devnet.networkPassphrase, [brokeEntry]).toXDR();
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
    await defect('two operations', 'wrong_operation', (p) => p.tx.operations.push(p.op)),
    await defect('payment operation', 'wrong_operation', (p) => {
      p.tx.operations = [Operation.payment({ destination: payee.publicKey, asset: Asset.native(), amount: '1' })];
    }),
    await defect('no contract invoked', 'wrong_operation', (p) => {
      p.tx.operations = [Operation.uploadContractWasm({ wasm: Buffer.from('0061736d01000000', 'hex') })];
    }),
    await defect('transaction source a facilitator address', 'unsafe_tx_or_op_source', (p) => (p.tx.sourceAccount = account(facilitator))),
    await defect('operation source a facilitator address', 'unsafe_tx_or_op_source', (p) => (p.op.sourceAccount = account(facilitator))),
    await defect('function not transfer', 'wrong_function_name', (p) => {
      p.call.functionName = new xdr.InvokeContractArgs({ ...p.call, functionName: 'approve' }).functionName;
    }),
    await defect('four arguments', 'wrong_function_name', (p) => p.call.args.push(xdr.ScVal.scvU32(0))),
    await defect(
      'transfer from a facilitator address',
      'facilitator_is_payer',
      (p) => (p.call.args[0] = new Address(facilitator).toScVal()),
    ),
    await defect('no authorization entries', 'no_auth_entries', (p) => p.auth.splice(0)),
    // The transaction's source is the payer, so the host accepts the entry and the check is reached.
    await defect('source-account credentials', 'unsupported_credential_type', (p) => {
      p.tx.sourceAccount = account(payer.publicKey);
      p.auth[0] = sourceAccountEntry(invocation(p));
    }),
    await defect('facilitator address in an authorization entry', 'facilitator_in_auth', async (p) => {
      p.auth.push(await signedEntry(Keypair.fromSecret(submitter.secret), invocation(p), expiry(p)));
    }),
    // The devnet's host matches the payer's entry against the call exactly, so the sub-invocation
    // rides on an extra entry (another signer's, unused by the call) to reach the check.
    await defect('sub-invocations', 'has_subinvocations', async (p) => {
      const root = invocation(p);
      const withSub = new xdr.SorobanAuthorizedInvocation({ function: root.function, subInvocations: [root] });
      p.auth.push(await signedEntry(Keypair.fromSecret(other.secret), withSub, expiry(p)));
    }),
    // The enforcing simulation refuses an unsigned entry of a G-account payer before the check.
    await defect('payer entry unsigned', 'simulation_failed', (p) => (credentialsOf(p.entry).signature = xdr.ScVal.scvVoid())),
    await defect('pending signature of another address', 'unexpected_pending_signatures', (p) =>
      p.auth.push(unsignedEntry(other.publicKey, invocation(p), expiry(p))),
    ),
    await defect('expired authorization', 'simulation_failed', async (p) => {
      p.auth[0] = await authorizeEntry(p.entry, payerKey, devnet.latestLedger().sequence - 1, devnet.networkPassphrase);
    }),
    { name: 'empty payer balance', code: 'invalid_exact_stellar_payload_simulation_failed', payload: withTx(brokeTx), requirements: req },
    // svc derives the fee from the simulation and overrides the client's bid.
    await defect('client fee bid above the ceiling', 'valid', (p) => (p.tx.fee = UPSTREAM_MAX_BID + 1)),
    await defect('client fee bid below the resource fee', 'valid', (p) => (p.tx.fee = 100)),
    {
      name: 'fee above the ceiling',
      code: 'invalid_exact_stellar_payload_fee_exceeds_maximum',
      payload: pay,
      requirements: req,
      lowCeiling: true,
    },
  ];
}

const verdictOf = (r: { isValid: boolean; invalidReason?: string }): Verdict => (r.isValid ? 'valid' : String(r.invalidReason));

/** Both verdicts on one case: svc's over HTTP, upstream's in process. */
async function judge(c: Case): Promise<[Verdict, Verdict]> {
  const body = { x402Version: 2, paymentPayload: c.payload, paymentRequirements: c.requirements };
  const ours = await fetch(`${(c.lowCeiling ? lowCeilingSvc : svc).url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json() as Promise<{ isValid: boolean; invalidReason?: string }>);
  const theirs = await expectConsole('error', /Simulation error|error/i, () =>
    (c.lowCeiling ? lowCeilingUpstream : upstream).verify(c.payload as never, c.requirements as never).catch((err: unknown) => ({
      isValid: false,
      invalidReason: `threw: ${String(err).slice(0, 60)}`,
    })),
  );
  return [verdictOf(ours), verdictOf(theirs.result)];
}

describe('svc /verify against @x402/stellar 2.9.0 ExactStellarScheme.verify on the devnet', () => {
  it('agrees on every generated payment except the documented disagreements', async () => {
    const seen: Record<string, [Verdict, Verdict]> = {};
    const record = (name: string, pair: [Verdict, Verdict]) => {
      if (pair[0] !== pair[1]) seen[name] = pair;
    };
    let valid: Case | undefined;
    for (let round = 0; round < 2; round++) {
      for (const c of await cases()) {
        const pair = await judge(c);
        record(c.name, pair);
        if (c.code) expect(pair[0], c.name).toBe(c.code);
        if (c.name === 'valid') {
          expect(pair).toEqual(['valid', 'valid']);
          valid = c;
        }
      }
    }
    // A replay: the last valid payment, settled through svc, then verified again on both sides.
    const settled = await fetch(`${svc.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x402Version: 2, paymentPayload: valid!.payload, paymentRequirements: valid!.requirements }),
    }).then((r) => r.json() as Promise<{ success: boolean; errorReason?: string }>);
    expect(settled).toMatchObject({ success: true });
    const replayed = await judge({ ...valid!, name: 'replayed payload' });
    record('replayed payload', replayed);
    expect(replayed[0]).toBe('invalid_exact_stellar_payload_simulation_failed');

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
