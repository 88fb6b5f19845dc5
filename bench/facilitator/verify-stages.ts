/**
 * The CPU of a verify's in-process stages, per call.
 *
 * The CPU of a verify's in-process stages, per call, on one real payload and the devnet's real
 * simulation answer for it (docs/BENCHMARKS.md "Verify and cheap requests against their floors"):
 * where an HTTP ratio is lost in the machine's noise, this says what a change saved.
 *
 *   npx tsx bench/facilitator/verify-stages.ts [--n 4000]
 */
import { startDevnet } from '../../src/devnet/index.ts';
import { checkAuthEntries, checkTransferEvents } from '../../src/chains/stellar/exact/checks.ts';
import { checkFacilitatorSafety, checkProtocol, decodeTransfer } from '../../src/chains/stellar/exact/payload.ts';
import { parseSimulation } from '../../src/chains/stellar/rpc.ts';
import { machine } from '../lib/ops-procs.ts';
import { exactTerms } from '../lib/payments.ts';
import { QUICK } from '../lib/quick.ts';

const at = process.argv.indexOf('--n');
const N = at > 0 ? Number(process.argv[at + 1]) : QUICK ? 50 : 4000;

const devnet = await startDevnet({ ledgerMs: 0 });
try {
  const seller = await devnet.createAccount({});
  const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 300);
  const payload = await sign(await buyer(10_000_000n));
  const wrongAmount = { ...requirements, amount: '999' } as never as Parameters<typeof decodeTransfer>[1];
  const reqs = requirements as never as Parameters<typeof decodeTransfer>[1];
  const facilitator = new Set([(await devnet.createAccount({})).publicKey]);
  const answer = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'simulateTransaction',
      params: { transaction: (payload as unknown as { payload: { transaction: string } }).payload.transaction, authMode: 'enforce' },
    }),
  });
  const raw = ((await answer.json()) as { result: Parameters<typeof parseSimulation>[0] }).result;

  // CPU time (process.cpuUsage), not wall time: on a shared machine the process is descheduled
  // mid-loop. The best of five batches, after a warm-up batch.
  const time = (name: string, run: () => unknown) => {
    const batch = Math.ceil(N / 5);
    let best = Infinity;
    for (let b = 0; b < 6; b++) {
      const start = process.cpuUsage();
      for (let i = 0; i < batch; i++) run();
      const used = process.cpuUsage(start);
      if (b > 0) best = Math.min(best, (used.user + used.system) / batch);
    }
    console.log(`${name.padEnd(44)} ${best.toFixed(1)} µs`);
  };
  const rejecting = (run: () => unknown) => () => {
    try {
      run();
    } catch {
      /* the rejected payload's answer */
    }
  };
  console.log(`machine: ${await machine()}, n ${N}`);
  const passphrase = checkProtocol(payload, reqs);
  const transfer = decodeTransfer(payload, reqs, passphrase);
  const simulation = parseSimulation(raw);
  if (!simulation.ok) throw new Error('the simulation failed');
  const payer = transfer.from;
  time(
    'rejected: checkProtocol + decodeTransfer',
    rejecting(() => decodeTransfer(payload, wrongAmount, checkProtocol(payload, wrongAmount))),
  );
  time('valid: checkProtocol + decodeTransfer', () => decodeTransfer(payload, reqs, checkProtocol(payload, reqs)));
  time('valid: the above + checkFacilitatorSafety', () =>
    checkFacilitatorSafety(decodeTransfer(payload, reqs, checkProtocol(payload, reqs)), facilitator),
  );
  time('valid: parseSimulation', () => parseSimulation(raw));
  time('valid: checkTransferEvents', () =>
    checkTransferEvents({ events: simulation.events, asset: transfer.asset, payer, payTo: transfer.to, amount: transfer.amount }),
  );
  // Every stage of decide's own CPU on a payload decoded afresh, as each request decodes its own.
  time('valid: all of the above + checkAuthEntries', () => {
    const fresh = decodeTransfer(payload, reqs, checkProtocol(payload, reqs));
    checkFacilitatorSafety(fresh, facilitator);
    const parsed = parseSimulation(raw);
    if (!parsed.ok) throw new Error('the simulation failed');
    checkAuthEntries({ auth: fresh.auth, payer: fresh.from, expiryBound: parsed.latestLedger + 100 });
    checkTransferEvents({ events: parsed.events, asset: fresh.asset, payer: fresh.from, payTo: fresh.to, amount: fresh.amount });
  });
  console.log(`after: ${await machine()}`);
} finally {
  await devnet.stop();
}
