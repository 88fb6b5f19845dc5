/**
 * Devnet heap against transaction count, with and without the retention bound.
 *
 * Devnet memory against transaction count (docs/BENCHMARKS.md, docs/DEVNET.md "What is modelled"):
 * the heap after a full GC as signed USDC payments accumulate, with the count bound
 * (`retentionTransactions`, default 10,000) against the baseline of the time bound alone
 * (17,280 ledgers, which a busy devnet never reaches). Each configuration runs in its own process
 * (`node --expose-gc`), 20 payments per ledger.
 *
 *   npx tsx bench/devnet/devnet-memory.ts [--n 4000] [--bound 2000]
 */
import { spawnSync } from 'node:child_process';
import { Keypair, rpc } from '@stellar/stellar-sdk';
import { startDevnet } from '../../src/devnet/index.ts';
import { preparePayment } from '../../src/devnet/transfers.ts';
import { machine } from '../lib/ops-procs.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('n', QUICK ? '60' : '4000'));
const PER_LEDGER = 20;
const MiB = 1024 * 1024;

async function child(bound: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const devnet = await startDevnet({ ledgerMs: 0, retentionTransactions: bound });
  const s = new rpc.Server(devnet.rpcUrl, { allowHttp: true });
  const payer = await devnet.createAccount({ usdc: 10_000_000_000n });
  const payee = await devnet.createAccount();
  const sources = await Promise.all(
    Array.from({ length: PER_LEDGER }, async () => Keypair.fromSecret((await devnet.createAccount()).secret)),
  );
  gc();
  const start = process.memoryUsage().heapUsed;
  const samples: string[] = [];
  for (let done = 0; done < N;) {
    const txs = await Promise.all(
      sources.map(
        async (source) =>
          (
            await preparePayment(s, devnet.networkPassphrase, {
              contractId: devnet.usdc.contractId,
              from: payer.publicKey,
              to: payee.publicKey,
              amount: 1n,
              source,
              payer: Keypair.fromSecret(payer.secret),
            })
          ).tx,
      ),
    );
    for (const tx of txs) await s.sendTransaction(tx);
    await devnet.closeLedger();
    done += txs.length;
    if (done % Math.max(PER_LEDGER, Math.floor(N / 8 / PER_LEDGER) * PER_LEDGER) === 0 || done >= N) {
      gc();
      samples.push(`${done}: ${(process.memoryUsage().heapUsed / MiB).toFixed(1)}`);
    }
  }
  gc();
  const end = process.memoryUsage().heapUsed;
  console.log(
    JSON.stringify({
      bound,
      n: N,
      startMiB: start / MiB,
      endMiB: end / MiB,
      kbPerTx: (end - start) / 1024 / N,
      kept: devnet.ledger.txs.size,
      samples,
    }),
  );
  await devnet.stop();
}

if (process.argv.includes('--child')) {
  await child(Number(arg('bound', '10000')));
} else {
  const bound = arg('bound', QUICK ? '40' : '2000');
  console.log(`machine: ${await machine()}`);
  console.log(
    '| bound | payments | heap at start (MiB) | heap after (MiB) | growth per payment | transaction records kept | heap samples (payments: MiB) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const b of ['Infinity', bound]) {
    const r = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', import.meta.filename, '--child', '--bound', b, '--n', String(N)],
      {
        encoding: 'utf8',
        maxBuffer: 16 * MiB,
      },
    );
    const line = r.stdout.trim().split('\n').at(-1) ?? '';
    if (r.status !== 0 || !line.startsWith('{')) throw new Error(`child failed: ${r.stderr}`);
    const x = JSON.parse(line) as { startMiB: number; endMiB: number; kbPerTx: number; kept: number; samples: string[] };
    console.log(
      `| ${b === 'Infinity' ? 'none (time only, baseline)' : b} | ${N} | ${x.startMiB.toFixed(1)} | ${x.endMiB.toFixed(1)} | ${x.kbPerTx.toFixed(1)} KB | ${x.kept} | ${x.samples.join(', ')} |`,
    );
  }
  console.log(`after: ${await machine()}`);
}
