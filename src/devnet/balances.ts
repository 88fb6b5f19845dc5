/**
 * Token balances as the devnet's two token models store them, apart from the host's contract
 * calls (host.ts) because this is storage: where a holder's balance lives (a G holder's SAC
 * balance is its classic trustline; every other balance is a persistent contract-data entry) and
 * the rules for spending and receiving it (authorization flag, trustline limit, overflow), with
 * the token contracts' error codes and messages.
 */
import { xdr } from '@stellar/stellar-sdk';
import { HostError, TokenError } from './host-errors.ts';
import type { StateView } from './state.ts';
import {
  addressString,
  alphaNum4Asset,
  contractDataEntry,
  contractDataKey,
  i128,
  i128Value,
  mapEntry,
  scAddress,
  sym,
  trustlineKey,
} from './xdr.ts';

const I64_MAX = (1n << 63n) - 1n;
const AUTHORIZED_FLAG = 1;

/** One of the modelled tokens: the USDC Stellar Asset Contract ('sac') or the plain SEP-41 token ('custom'). */
export interface TokenModel {
  kind: 'sac' | 'custom';
  contractId: string;
  /** SAC only: "USDC:G…" (the fourth transfer-event topic). */
  assetName?: string;
  issuer?: string;
  assetCode?: string;
}

/** Where balances are read and written: an invocation's state view, at its ledger. */
export interface BalanceContext {
  view: StateView;
  ledgerSeq: number;
  /** The network's minimum TTL of a new persistent entry. */
  minPersistentTtl: number;
}

/**
 * A contract-held balance is extended to 30 days whenever it is written with 29 days or less
 * left (the Stellar Asset Contract's BALANCE_EXTEND_AMOUNT and BALANCE_TTL_THRESHOLD in
 * rs-soroban-env's stellar_asset_contract/storage_types.rs; the SEP-41 reference token does the
 * same). extend_ttl extends when the TTL (live-until − current ledger) is at most the threshold.
 */
export const BALANCE_EXTEND_LEDGERS = 30 * 17_280;
export const BALANCE_TTL_THRESHOLD_LEDGERS = BALANCE_EXTEND_LEDGERS - 17_280;
/**
 * Every transfer extends the token's instance to 7 days when 6 days or less are left
 * (INSTANCE_EXTEND_AMOUNT and INSTANCE_TTL_THRESHOLD there): the first transfer after a quiet
 * spell pays that rent.
 */
export const INSTANCE_EXTEND_LEDGERS = 7 * 17_280;
export const INSTANCE_TTL_THRESHOLD_LEDGERS = INSTANCE_EXTEND_LEDGERS - 17_280;

export const balanceKey = (token: string, holder: xdr.ScAddress): xdr.LedgerKey =>
  contractDataKey(scAddress(token), xdr.ScVal.scvVec([sym('Balance'), xdr.ScVal.scvAddress(holder)]), 'persistent');

/** A holder's balance and whether it may move (a SAC G holder without a trustline fails: TrustlineMissing). */
export function readBalance(ctx: BalanceContext, token: TokenModel, holder: xdr.ScAddress): { amount: bigint; authorized: boolean } {
  const holderStr = addressString(holder);
  if (token.kind === 'sac' && holder.type === 'scAddressTypeAccount') {
    if (holderStr === token.issuer) return { amount: I64_MAX, authorized: true };
    const tl = ctx.view.get(trustlineKey(holderStr, alphaNum4Asset(token.assetCode!, token.issuer!)));
    if (!tl || tl.data.type !== 'trustline')
      throw new HostError('Contract', TokenError.TrustlineMissing, 'trustline entry is missing for account', [
        xdr.ScVal.scvAddress(holder),
      ]);
    return { amount: tl.data.trustLine.balance, authorized: (tl.data.trustLine.flags & AUTHORIZED_FLAG) !== 0 };
  }
  const e = ctx.view.get(balanceKey(token.contractId, holder));
  if (!e || e.data.type !== 'contractData') return { amount: 0n, authorized: true };
  return decodeContractBalance(token, e.data.contractData.val);
}

function writeBalance(ctx: BalanceContext, token: TokenModel, holder: xdr.ScAddress, amount: bigint, authorized: boolean): void {
  const holderStr = addressString(holder);
  if (token.kind === 'sac' && holder.type === 'scAddressTypeAccount') {
    if (holderStr === token.issuer) return; // the issuer mints and burns; it holds no trustline
    const key = trustlineKey(holderStr, alphaNum4Asset(token.assetCode!, token.issuer!));
    const tl = ctx.view.get(key)!;
    if (tl.data.type !== 'trustline') return;
    const t = tl.data.trustLine;
    ctx.view.put(
      key,
      xdr.LedgerEntryData.trustline(
        new xdr.TrustLineEntry({ accountId: t.accountId, asset: t.asset, balance: amount, limit: t.limit, flags: t.flags, ext: t.ext }),
      ),
    );
    return;
  }
  const key = balanceKey(token.contractId, holder);
  const val =
    token.kind === 'sac'
      ? xdr.ScVal.scvMap([
          mapEntry(sym('amount'), i128(amount)),
          mapEntry(sym('authorized'), xdr.ScVal.scvBool(authorized)),
          mapEntry(sym('clawback'), xdr.ScVal.scvBool(false)),
        ])
      : i128(amount);
  const existing = ctx.view.get(key);
  let liveUntil = existing?.liveUntil ?? ctx.ledgerSeq + ctx.minPersistentTtl - 1;
  if (liveUntil - ctx.ledgerSeq <= BALANCE_TTL_THRESHOLD_LEDGERS) liveUntil = ctx.ledgerSeq + BALANCE_EXTEND_LEDGERS;
  ctx.view.put(key, contractDataEntry(key, val), liveUntil);
}

/** Takes `amount` from a holder (the issuer spends without limit). */
export function spend(ctx: BalanceContext, token: TokenModel, holder: xdr.ScAddress, amount: bigint): void {
  const b = readBalance(ctx, token, holder);
  if (!b.authorized)
    throw new HostError('Contract', TokenError.BalanceDeauthorized, 'balance is deauthorized', [xdr.ScVal.scvAddress(holder)]);
  if (addressString(holder) === token.issuer) return;
  if (b.amount < amount) {
    const msg =
      token.kind === 'sac' && holder.type === 'scAddressTypeAccount'
        ? 'resulting balance is not within the allowed range'
        : 'balance is not sufficient to spend';
    throw new HostError('Contract', TokenError.Balance, msg, [i128(b.amount), i128(amount)]);
  }
  writeBalance(ctx, token, holder, b.amount - amount, b.authorized);
}

/** Gives `amount` to a holder (the issuer receives by burning). */
export function receive(ctx: BalanceContext, token: TokenModel, holder: xdr.ScAddress, amount: bigint): void {
  const b = readBalance(ctx, token, holder);
  if (!b.authorized)
    throw new HostError('Contract', TokenError.BalanceDeauthorized, 'balance is deauthorized', [xdr.ScVal.scvAddress(holder)]);
  if (addressString(holder) === token.issuer) return;
  const next = b.amount + amount;
  if (token.kind === 'sac' && holder.type === 'scAddressTypeAccount') {
    const tl = ctx.view.get(trustlineKey(addressString(holder), alphaNum4Asset(token.assetCode!, token.issuer!)))!;
    const limit = tl.data.type === 'trustline' ? tl.data.trustLine.limit : I64_MAX;
    if (next > I64_MAX) throw new HostError('Contract', TokenError.Overflow, 'balance overflow');
    if (next > limit)
      throw new HostError('Contract', TokenError.Balance, 'resulting balance is not within the allowed range', [
        i128(b.amount),
        i128(amount),
      ]);
  } else if (next >= 1n << 127n) {
    throw new HostError('Contract', TokenError.Overflow, 'balance overflow');
  }
  writeBalance(ctx, token, holder, next, b.authorized);
}

function decodeContractBalance(token: TokenModel, val: xdr.ScVal): { amount: bigint; authorized: boolean } {
  if (token.kind === 'custom') return { amount: i128Value(val) ?? 0n, authorized: true };
  let amount = 0n;
  let authorized = true;
  if (val.type === 'scvMap' && val.map) {
    for (const e of val.map) {
      if (e.key.type !== 'scvSymbol') continue;
      if (String(e.key.sym) === 'amount') amount = i128Value(e.val) ?? 0n;
      if (String(e.key.sym) === 'authorized' && e.val.type === 'scvBool') authorized = e.val.b;
    }
  }
  return { amount, authorized };
}
