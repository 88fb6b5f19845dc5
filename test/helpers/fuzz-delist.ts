/**
 * Bodies for POST /discovery/delist (openapi.yaml DelistRequest) for the contract fuzzer: signed
 * withdrawals of the listings the fuzz world knows (by a key that owns none of them: 403 or 404),
 * schema-valid bodies with a fresh or any `issuedAt` (any is mostly `svc_delist_stale`, which the
 * oracle excuses as clock state), mutations, schema-aware negatives and the shared junk.
 */
import { Keypair } from '@stellar/stellar-sdk';
import fc from 'fast-check';
import { delistMessage } from '../../src/delist-message.ts';
import { jsonBody } from './fuzz-http.ts';
import { mutatedValue, negativeValue, validValue, type Hints } from './fuzz-schema.ts';

type BodyPart = { headers: Record<string, string>; body?: Buffer; kind: string };

const SCHEMA = { $ref: '#/components/schemas/DelistRequest' };
const signer = Keypair.random();

/** A time within the 5 minutes svc accepts (generated when the request is, so it is fresh then). */
const freshTime = fc.integer({ min: -240_000, max: 240_000 }).map((skew) => new Date(Date.now() + skew).toISOString());

/** `resources`: listing URLs the world settled (may be empty). */
export function delistBody(resources: string[], rawJunk: fc.Arbitrary<BodyPart>): fc.Arbitrary<BodyPart> {
  const asJson =
    (kind: string) =>
    (value: unknown): BodyPart => ({ headers: { 'content-type': 'application/json' }, body: jsonBody(value), kind });
  const resource = resources.length ? fc.oneof(fc.constantFrom(...resources), fc.webUrl()) : fc.webUrl();
  const signed = fc
    .record({ resource, type: fc.constantFrom('http', 'mcp'), toolName: fc.constantFrom('', 'forecast'), issuedAt: freshTime })
    .map((f) => {
      const fields = { ...f, payTo: signer.publicKey() };
      return { ...fields, signature: Buffer.from(signer.signMessage(delistMessage(fields))).toString('base64') };
    });
  const hints: Hints = { issuedAt: freshTime, payTo: fc.constant(signer.publicKey()), resource };
  return fc.oneof(
    { weight: 4, arbitrary: signed.map(asJson('signed withdrawal')) },
    { weight: 3, arbitrary: validValue(SCHEMA, hints).map(asJson('schema-valid body, fresh issuedAt')) },
    { weight: 2, arbitrary: validValue(SCHEMA).map(asJson('schema-valid body')) },
    { weight: 3, arbitrary: mutatedValue(SCHEMA, hints).map(asJson('mutated body')) },
    {
      weight: 3,
      arbitrary: negativeValue(SCHEMA, hints).map(({ value, keyword, path }) => asJson(`negative body: ${keyword} at ${path}`)(value)),
    },
    { weight: 1, arbitrary: rawJunk },
  );
}
