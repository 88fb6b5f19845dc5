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
const OTHER_CATALOG = { catalog: 'another-catalog', network: 'stellar:testnet' };

/** A time within what svc accepts, 5 minutes before its clock to 1 minute after (generated when the request is, so it is fresh then). */
const freshTime = fc.integer({ min: -240_000, max: 40_000 }).map((skew) => new Date(Date.now() + skew).toISOString());

/** `resources`: listing URLs the world settled (may be empty). */
export function delistBody(resources: string[], rawJunk: fc.Arbitrary<BodyPart>): fc.Arbitrary<BodyPart> {
  const asJson =
    (kind: string) =>
    (value: unknown): BodyPart => ({ headers: { 'content-type': 'application/json' }, body: jsonBody(value), kind });
  const resource = resources.length ? fc.oneof(fc.constantFrom(...resources), fc.webUrl()) : fc.webUrl();
  const signed = fc
    .record({
      resource,
      type: fc.constantFrom('http', 'mcp'),
      toolName: fc.constantFrom('', 'forecast'),
      issuedAt: freshTime,
      named: fc.boolean(),
    })
    .map((f) => {
      const { named: _named, ...rest } = f;
      const fields = { ...rest, payTo: signer.publicKey() };
      // Signed for a catalog that is not the world's (its identifier is random): 403 whether or not
      // the body names it (svc_delist_other_catalog, else svc_delist_signature_invalid).
      const signature = Buffer.from(signer.signMessage(delistMessage({ ...fields, ...OTHER_CATALOG }))).toString('base64');
      return { ...fields, ...(f.named ? { catalog: OTHER_CATALOG.catalog } : {}), signature };
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
