/**
 * Channel accounts (docs/OPERATIONS.md "Channel accounts"): settlement throughput is one
 * transaction per source account per ledger, so svc can derive N source accounts from the first
 * submitter seed instead of an operator managing N seeds. Channel i's seed is
 * SHA-256("svc channel account" ‖ i ‖ the funder's raw seed): the same seed gives the same
 * channels on every start and every instance, nothing has to be stored, and no channel seed is
 * ever printed. Channels only sign as the transaction source; the fee-bump account (or the funder
 * when none is configured) pays every fee, so a channel needs only its reserve.
 *
 * A channel that does not exist yet is created by the funder the first time it is needed (one
 * createAccount transaction for every missing channel, at most 100 operations), so svc starts
 * even while the RPC is unreachable. Instances sharing one funder may all do so at once: the ones
 * whose transaction loses the race look again and create only what is still missing.
 */
import { createHash } from 'node:crypto';
import { Account, Keypair, Operation, TransactionBuilder } from '@stellar/stellar-sdk';
import { AccountMissingError, RpcError, type ChainRpc } from './rpc.ts';
import { keypairFromRawSeed, signTransaction } from './keys.ts';

export const MAX_CHANNEL_ACCOUNTS = 100;
/** What each new channel receives: the 1 XLM reserve plus a margin (fees are paid by the fee account). */
export const CHANNEL_STARTING_BALANCE_XLM = '2';
/** Pause before looking at the channels again when another transaction took the funder's sequence. */
const CONTENDED_RETRY_MS = 1_000;

export function deriveChannelKeys(funder: Keypair, count: number): Keypair[] {
  return Array.from({ length: count }, (_, i) => {
    const index = Buffer.alloc(4);
    index.writeUInt32BE(i);
    const seed = createHash('sha256').update('svc channel account').update(index).update(funder.rawSecretKey()).digest();
    return keypairFromRawSeed(seed);
  });
}

export interface ChannelOpenerOptions {
  rpc: ChainRpc;
  funder: Keypair;
  passphrase: string;
  channels: string[];
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How long to wait for the createAccount transaction (default 60 s). */
  timeoutMs?: number;
  logger?: { info(obj: Record<string, unknown>, msg?: string): void };
}

/** Creates the missing channel accounts, once at a time (concurrent callers share one attempt). */
export class ChannelOpener {
  private inflight: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: ChannelOpenerOptions) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  }

  /** The account's sequence, creating the channels first when `address` is a missing channel. */
  async sequenceOf(address: string): Promise<bigint> {
    try {
      return await this.options.rpc.getAccountSequence(address);
    } catch (err) {
      if (!(err instanceof AccountMissingError) || !this.options.channels.includes(address)) throw err;
      this.inflight ??= this.openMissing().finally(() => {
        this.inflight = undefined;
      });
      await this.inflight;
      return this.options.rpc.getAccountSequence(address);
    }
  }

  /**
   * Creates every missing channel. Instances configured with one funder may do this at the same
   * moment, and only one transaction can take the funder's next sequence number: the others are
   * refused (TRY_AGAIN_LATER while it is queued, txBadSeq once it has landed) or fail because a
   * destination exists by then. Such an instance looks again after a short wait and creates what
   * is still missing, until nothing is or the wait (`timeoutMs`) is over.
   */
  private async openMissing(): Promise<void> {
    const deadline = this.now() + (this.options.timeoutMs ?? 60_000);
    for (;;) {
      const missing = await this.missingChannels();
      if (missing.length === 0) return;
      if ((await this.create(missing, deadline)) === 'created') return;
      if (this.now() > deadline)
        throw new RpcError(
          'sendTransaction',
          `the channel accounts were not created within the wait: the funder's sequence stayed contended`,
        );
      this.options.logger?.info({ channels: missing }, 'another transaction took the funder sequence; looking at the channels again');
      await this.sleep(CONTENDED_RETRY_MS);
    }
  }

  private async missingChannels(): Promise<string[]> {
    const missing: string[] = [];
    for (const address of this.options.channels) {
      try {
        await this.options.rpc.getAccountSequence(address);
      } catch (err) {
        if (err instanceof AccountMissingError) missing.push(address);
        else throw err;
      }
    }
    return missing;
  }

  /** One createAccount transaction for `missing`: created, or contended (see openMissing); any other failure throws. */
  private async create(missing: string[], deadline: number): Promise<'created' | 'contended'> {
    const { rpc, funder, passphrase, logger } = this.options;
    const sequence = await rpc.getAccountSequence(funder.publicKey());
    const builder = new TransactionBuilder(new Account(funder.publicKey(), sequence.toString()), {
      fee: String(100 * missing.length),
      networkPassphrase: passphrase,
    }).setTimeout(30);
    for (const destination of missing)
      builder.addOperation(Operation.createAccount({ destination, startingBalance: CHANNEL_STARTING_BALANCE_XLM }));
    const tx = builder.build();
    signTransaction(tx, funder);
    const sent = await rpc.send(tx);
    if (sent.status === 'TRY_AGAIN_LATER' || (sent.status === 'ERROR' && sent.resultCode === 'txBadSeq')) return 'contended';
    if (sent.status !== 'PENDING' && sent.status !== 'DUPLICATE') {
      throw new RpcError(
        'sendTransaction',
        `creating ${missing.length} channel accounts was refused (${sent.status}${sent.resultCode ? ` ${sent.resultCode}` : ''})`,
      );
    }
    for (;;) {
      const status = await rpc.getTransaction(sent.hash);
      if (status.status === 'SUCCESS') {
        logger?.info({ channels: missing, transaction: sent.hash }, `created ${missing.length} channel accounts`);
        return 'created';
      }
      if (status.status === 'FAILED') {
        // All or nothing: a destination that exists now (another instance created it) fails the whole transaction.
        if ((await this.missingChannels()).length < missing.length) return 'contended';
        throw new RpcError(
          'getTransaction',
          `the channel-account transaction ${sent.hash} failed (${status.resultCode ?? 'no result code'}); is the funder ${funder.publicKey()} funded?`,
        );
      }
      if (this.now() > deadline)
        throw new RpcError('getTransaction', `the channel-account transaction ${sent.hash} did not land within the wait`);
      await this.sleep(250);
    }
  }
}
