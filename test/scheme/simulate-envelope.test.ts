/**
 * What verify simulates is the envelope the buyer sent (src/chains/stellar/exact/payload.ts,
 * `envelope`): its base64 text goes to the RPC as it came when that text is canonical, and the
 * decoded transaction encoded again when it is not (an RPC may refuse whitespace or missing
 * padding that the SDK's decoder takes). The RPC is the devnet behind a loopback proxy that
 * records each simulateTransaction call as it crosses the wire.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';

let devnet: Devnet;
let proxy: http.Server;
let proxyUrl: string;
const simulated: string[] = [];

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0 });
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const call = JSON.parse(body.toString('utf8')) as { method: string; params?: { transaction?: string } };
      if (call.method === 'simulateTransaction') simulated.push(String(call.params?.transaction));
      const forward = http.request(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(res);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await devnet.stop();
});

async function payment() {
  const seller = await devnet.createAccount({});
  const buyer = Keypair.fromSecret((await devnet.createAccount({ usdc: 10_000_000n })).secret);
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: 'stellar:testnet',
    asset: devnet.usdc.contractId,
    amount: '1000',
    payTo: seller.publicKey,
    maxTimeoutSeconds: 300,
    extra: { areFeesSponsored: true },
  };
  const rpc = createSdkRpc({ url: devnet.rpcUrl });
  const payload = await createStellarPayment({
    requirements,
    signer: buyer,
    rpc,
    ledgerTime: new LedgerTimeEstimator(rpc),
  });
  const scheme = new ExactStellarScheme({
    network: 'stellar:testnet',
    rpc: createSdkRpc({ url: proxyUrl }),
    submitters: [Keypair.fromSecret((await devnet.createAccount({ usdcTrustline: false })).secret)],
  });
  const withTransaction = (transaction: string): PaymentPayload => ({ ...payload, payload: { ...payload.payload, transaction } });
  return { scheme, requirements, transaction: (payload.payload as { transaction: string }).transaction, withTransaction };
}

describe('the envelope verify simulates', () => {
  it('is the text the buyer sent, when it is canonical base64: the same bytes written another way stay as written', async () => {
    const { scheme, requirements, transaction, withTransaction } = await payment();
    // The envelope's byte count leaves unused bits in the last base64 character: setting one
    // writes the same bytes another way, which only a forwarded (not re-encoded) text keeps.
    expect(transaction.endsWith('A==')).toBe(true);
    const sameBytes = `${transaction.slice(0, -3)}B==`;
    expect(Buffer.from(sameBytes, 'base64').equals(Buffer.from(transaction, 'base64'))).toBe(true);
    simulated.length = 0;
    const result = await scheme.verify(withTransaction(sameBytes), requirements);
    expect(result).toMatchObject({ isValid: true });
    expect(simulated).toEqual([sameBytes]);
  });

  it('is encoded again when the text is not canonical (line breaks, no padding)', async () => {
    const { scheme, requirements, transaction, withTransaction } = await payment();
    const wrapped = transaction.replace(/.{76}/g, '$&\n');
    const unpadded = transaction.replace(/=+$/, '');
    simulated.length = 0;
    expect(await scheme.verify(withTransaction(wrapped), requirements)).toMatchObject({ isValid: true });
    expect(await scheme.verify(withTransaction(unpadded), requirements)).toMatchObject({ isValid: true });
    expect(simulated).toEqual([transaction, transaction]);
  });
});
