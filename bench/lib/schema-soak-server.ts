/**
 * The svc under test for bench/catalog/schema-soak.ts: the real HTTP app and the real catalog on a temp
 * file, with a payment scheme that settles every request at once (the chain is not what this
 * bench measures: the settle hook's schema validation is). Prints its URL, then serves.
 *
 *   npx tsx bench/lib/schema-soak-server.ts <dbPath>
 */
import { Keypair } from '@stellar/stellar-sdk';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { ReadinessProbe } from '../../src/ops/readiness.ts';
import type { PaymentScheme } from '../../src/scheme/types.ts';
import { createService } from '../../src/service.ts';

const PAYER = Keypair.random().publicKey();
const instantScheme: PaymentScheme = {
  supported: () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: 'stellar:testnet', extra: { areFeesSponsored: true } }],
    signers: { 'stellar:*': [PAYER] },
  }),
  verify: async () => ({ isValid: true, payer: PAYER }),
  settle: async () => ({ success: true, transaction: 'ab'.repeat(32), network: 'stellar:testnet', payer: PAYER }),
};

// Listings as the settles write them: owned by the first payTo (the sellers' URLs here serve
// nothing to ask), and kept visible however old the seeded corpus's dates are.
const config = loadConfig({
  SUBMITTER_SECRET: Keypair.random().secret(),
  DB_PATH: process.argv[2]!,
  LISTING_OWNERSHIP: 'first-settlement',
  LISTING_TTL_DAYS: '36500',
});
// The catalog is the one createService opens at DB_PATH.
const service = createService(config, { logger: silentLogger(), schemes: [instantScheme], readiness: new ReadinessProbe({ checks: {} }) });
const running = await service.listen(0, '127.0.0.1');
process.stdout.write(`${running.url}\n`);
