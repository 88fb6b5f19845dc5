/**
 * The inclusion bid (docs/SCHEME.md "Inclusion fee"): read from what each recent ledger's Soroban
 * lane charged, above the base fee only after full ledgers, each ledger read once. The close meta
 * is the devnet's own (src/devnet/records.ts); the RPC is faked at the ChainRpc port.
 */
import { describe, expect, it } from 'vitest';
import { xdr } from '@stellar/stellar-sdk';
import { ledgerRecord } from '../../src/devnet/records.ts';
import { laneFeeOf, type LaneFee } from '../../src/chains/stellar/rpc.ts';
import { InclusionFeeEstimator, RECENT_LEDGERS, describeBid, inclusionBid } from '../../src/chains/stellar/inclusion-fee.ts';

const lane = (sequence: number, sorobanFee: bigint | null): LaneFee => ({ sequence, baseFee: 100n, sorobanFee });

describe('laneFeeOf', () => {
  it("reads the Soroban phase's fee and the header's base fee from a v2 close meta", () => {
    expect(laneFeeOf(7, ledgerRecord(7, 1_000, [], new Uint8Array(32)).metadataXdr)).toEqual(lane(7, 100n));
    expect(laneFeeOf(8, ledgerRecord(8, 1_000, [], new Uint8Array(32), 2_345).metadataXdr)).toEqual(lane(8, 2_345n));
  });

  it('names no lane fee for a v0 meta (a classic transaction set), and refuses meta that does not decode', () => {
    const v2 = xdr.LedgerCloseMeta.fromXdr(ledgerRecord(9, 1_000, [], new Uint8Array(32)).metadataXdr, 'base64');
    if (v2.type !== 'v2') throw new Error('expected v2');
    const v0 = xdr.LedgerCloseMeta.v0(
      new xdr.LedgerCloseMetaV0({
        ledgerHeader: v2.v2.ledgerHeader,
        txSet: new xdr.TransactionSet({ previousLedgerHash: new Uint8Array(32), txs: [] }),
        txProcessing: [],
        upgradesProcessing: [],
        scpInfo: [],
      }),
    );
    expect(laneFeeOf(9, v0.toXdr('base64'))).toEqual(lane(9, null));
    expect(() => laneFeeOf(10, 'AAAA')).toThrow(/ledger 10 with close meta that does not decode/);
  });
});

describe('inclusionBid', () => {
  it('bids the base fee while no ledger was full, however much the included transactions bid', () => {
    const bid = inclusionBid([lane(1, 100n), lane(2, 100n), lane(3, null)]);
    expect(bid).toEqual({ bid: 100n, ledgers: 3, fullLedgers: 0, surgePrice: null });
    expect(describeBid(bid)).toBe('inclusion fee 100 per operation, the base fee: none of the last 3 ledgers was full');
  });

  it('bids one stroop above the highest surge price of the full ones', () => {
    const bid = inclusionBid([lane(1, 100n), lane(2, 2_000n), lane(3, 700n)]);
    expect(bid).toEqual({ bid: 2_001n, ledgers: 3, fullLedgers: 2, surgePrice: 2_000n });
    expect(describeBid(bid)).toBe(
      'inclusion fee 2001 per operation: 2 of the last 3 ledgers were full, surge-priced at up to 2000 per operation',
    );
    expect(describeBid(inclusionBid([lane(4, 150n)]))).toBe(
      'inclusion fee 151 per operation: the last ledger was full, surge-priced at up to 150 per operation',
    );
  });
});

describe('InclusionFeeEstimator', () => {
  it('reads each ledger once, judges the last RECENT_LEDGERS, and keeps its last bid when the RPC fails', async () => {
    let now = 0;
    let latest = 20;
    let fail = false;
    const asked: Array<number | undefined> = [];
    const surged = new Set([15]);
    const rpc = {
      async getSorobanLaneFees(ledgers: number, after?: number) {
        asked.push(after);
        if (fail) throw new Error('down');
        const from = Math.max(latest - ledgers + 1, (after ?? 0) + 1);
        return Array.from({ length: Math.max(0, latest - from + 1) }, (_, i) => lane(from + i, surged.has(from + i) ? 900n : 100n));
      },
    };
    const estimator = new InclusionFeeEstimator(rpc, { ttlMs: 1_000, now: () => now });
    expect(await estimator.current()).toMatchObject({ bid: 901n, ledgers: RECENT_LEDGERS, fullLedgers: 1 });
    expect(await estimator.bid()).toBe(901n); // cached: not asked again
    expect(asked).toEqual([undefined]);
    // Ledger 15 leaves the window once ledger 25 closes.
    now += 1_000;
    latest = 25;
    expect(await estimator.current()).toMatchObject({ bid: 100n, ledgers: RECENT_LEDGERS, fullLedgers: 0 });
    expect(asked).toEqual([undefined, 20]);
    now += 1_000;
    fail = true;
    expect(await estimator.bid()).toBe(100n);
    expect(estimator.latest().bid).toBe(100n);
  });
});
