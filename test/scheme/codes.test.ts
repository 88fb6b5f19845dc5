/** The reachability table in docs/SCHEME.md covers exactly the 37 registry codes, which match openapi.yaml. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTLE_CODES, VERIFY_CODES } from '../../src/codes.ts';
import { openapiDocument } from '../helpers/contract.ts';

const table = readFileSync(new URL('../../docs/SCHEME.md', import.meta.url), 'utf8')
  .split('## Reachability of the 37 codes')[1]!
  .split('\n')
  .map((line) => /^\| `([a-z0-9_]+)`\s*\| (HTTP|unit)\s*\|/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ code: m[1]!, by: m[2]! }));

describe('scheme code registry', () => {
  it('30 verify + 7 settle codes, the same as the openapi.yaml enums', () => {
    const schemas = openapiDocument.components.schemas;
    expect(Object.keys(VERIFY_CODES)).toHaveLength(30);
    expect(Object.keys(SETTLE_CODES)).toHaveLength(7);
    expect(new Set(schemas.VerifyCode.enum)).toEqual(new Set(Object.keys(VERIFY_CODES)));
    expect(new Set(schemas.SettleCode.enum)).toEqual(new Set(Object.keys(SETTLE_CODES)));
  });

  it('docs/SCHEME.md lists every one of the 37 codes exactly once with how a test reaches it', () => {
    const codes = table.map((r) => r.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(new Set(codes)).toEqual(new Set([...Object.keys(VERIFY_CODES), ...Object.keys(SETTLE_CODES)]));
    // Everything not reachable over HTTP on the devnet is stated as such (11 codes, each explained there).
    expect(
      table
        .filter((r) => r.by === 'unit')
        .map((r) => r.code)
        .sort(),
    ).toEqual([
      'invalid_exact_stellar_payload_event_missing_contract_id',
      'invalid_exact_stellar_payload_event_not_transfer',
      'invalid_exact_stellar_payload_event_wrong_amount',
      'invalid_exact_stellar_payload_event_wrong_asset',
      'invalid_exact_stellar_payload_event_wrong_from',
      'invalid_exact_stellar_payload_event_wrong_to',
      'invalid_exact_stellar_payload_missing_payer_signature',
      'invalid_exact_stellar_payload_multiple_transfers',
      'invalid_exact_stellar_payload_no_transfer_events',
      'invalid_network',
      'invalid_x402_version',
    ]);
  });
});
