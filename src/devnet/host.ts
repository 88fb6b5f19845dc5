/**
 * The devnet's Soroban "host": natively modelled token contracts (the USDC Stellar Asset
 * Contract and a plain SEP-41 token) plus the authorization manager. No WASM runs, but
 * every observable a client sees (footprint keys, events, error codes, nonces, return
 * values) follows rs-soroban-env's behaviour. Authorization checks are in auth.ts, and how
 * balances are stored, spent and received in balances.ts.
 */
import { xdr } from '@stellar/stellar-sdk';
import { addressCredentials, authenticateAccount } from './auth.ts';
import { INSTANCE_EXTEND_LEDGERS, INSTANCE_TTL_THRESHOLD_LEDGERS, readBalance, receive, spend, type TokenModel } from './balances.ts';
import { HostError, TokenError } from './host-errors.ts';
import type { StateView } from './state.ts';

export { HostError, TokenError, type ErrorCodeName, type ErrorType } from './host-errors.ts';
import {
  accountKey,
  addressString,
  contractDataEntry,
  contractDataKey,
  contractIdBytes,
  i128,
  i128Value,
  mapEntry,
  scAddress,
  stripMux,
  str,
  sym,
} from './xdr.ts';

export interface HostConfig {
  networkId: Uint8Array;
  tokens: Map<string, TokenModel>;
  maxEntryTtl: number;
  minTempTtl: number;
  /** A new persistent entry (a balance) lives at least this many ledgers. */
  minPersistentTtl: number;
}

export type AuthMode = 'enforce' | 'record' | 'record_allow_nonroot';

export interface InvokeContext {
  view: StateView;
  ledgerSeq: number;
  /** G address of the transaction (or operation) source. */
  source: string;
  authMode: AuthMode;
  authEntries: xdr.SorobanAuthorizationEntry[];
  useUpgradedAuth: boolean;
  randomNonce: () => bigint;
}

export interface InvokeResult {
  ok: boolean;
  retval: xdr.ScVal;
  error?: HostError;
  contractEvents: xdr.ContractEvent[];
  /** fn_call / fn_return / error diagnostic events, in emission order (contract events included). */
  diagnostics: xdr.DiagnosticEvent[];
  recordedAuth: xdr.SorobanAuthorizationEntry[];
}

export const instanceKey = (contractId: string): xdr.LedgerKey =>
  contractDataKey(scAddress(contractId), xdr.ScVal.scvLedgerKeyContractInstance(), 'persistent');

export const nonceKey = (signer: xdr.ScAddress, nonce: bigint): xdr.LedgerKey =>
  contractDataKey(signer, xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })), 'temporary');

const contractEvent = (
  type: 'contract' | 'diagnostic',
  contractId: string | null,
  topics: xdr.ScVal[],
  data: xdr.ScVal,
): xdr.ContractEvent =>
  new xdr.ContractEvent({
    ext: xdr.ExtensionPoint.v0(),
    contractId: contractId ? new xdr.ContractId(contractIdBytes(contractId)) : null,
    type: type === 'contract' ? xdr.ContractEventType.contract : xdr.ContractEventType.diagnostic,
    body: xdr.ContractEventBody.v0(new xdr.ContractEventV0({ topics, data })),
  });

/** The host's diagnostic data rule: several args → Vec, one → itself, none → Void. */
const diagnosticData = (args: xdr.ScVal[]): xdr.ScVal => (args.length > 1 ? xdr.ScVal.scvVec(args) : (args[0] ?? xdr.ScVal.scvVoid()));

const diag = (event: xdr.ContractEvent, ok = true): xdr.DiagnosticEvent => new xdr.DiagnosticEvent({ inSuccessfulContractCall: ok, event });

export class Host {
  constructor(private readonly cfg: HostConfig) {}

  /** Invoke `fn(args)` on `contractId`; never throws for contract-level failures. */
  invoke(ctx: InvokeContext, contractId: string, fn: string, args: xdr.ScVal[]): InvokeResult {
    const res: InvokeResult = {
      ok: false,
      retval: xdr.ScVal.scvVoid(),
      contractEvents: [],
      diagnostics: [],
      recordedAuth: [],
    };
    res.diagnostics.push(
      diag(
        contractEvent('diagnostic', null, [sym('fn_call'), xdr.ScVal.scvBytes(contractIdBytes(contractId)), sym(fn)], diagnosticData(args)),
      ),
    );
    const used = new Set<number>();
    try {
      const token = this.cfg.tokens.get(contractId);
      if (!token) throw new HostError('Storage', 'MissingValue', 'trying to get non-existing value for contract instance');
      // Every real call loads the contract instance (read-only footprint entry).
      if (!ctx.view.get(instanceKey(contractId))) {
        throw new HostError('Storage', 'MissingValue', 'trying to get non-existing value for contract instance');
      }
      res.retval = this.dispatch(ctx, token, fn, args, res, used);
      res.ok = true;
      res.diagnostics.push(diag(contractEvent('diagnostic', contractId, [sym('fn_return'), sym(fn)], res.retval)));
    } catch (e) {
      const err = e instanceof HostError ? e : new HostError('Context', 'InternalError', e instanceof Error ? e.message : String(e));
      res.ok = false;
      res.error = err;
      res.contractEvents = [];
      res.diagnostics = res.diagnostics.map((d) => diag(d.event, false));
      const data = diagnosticData([str(err.detail), ...err.detailArgs]);
      res.diagnostics.push(diag(contractEvent('diagnostic', contractId, [sym('error'), xdr.ScVal.scvError(err.toScError())], data), false));
    }
    return res;
  }

  /** Issuer-side credit for devnet minting: the token's receive path, no auth, no events. */
  credit(view: StateView, token: TokenModel, holder: xdr.ScAddress, amount: bigint): void {
    const ctx: InvokeContext = {
      view,
      ledgerSeq: view.ledgerSeq,
      source: '',
      authMode: 'record',
      authEntries: [],
      useUpgradedAuth: false,
      randomNonce: () => 0n,
    };
    receive({ ...ctx, minPersistentTtl: this.cfg.minPersistentTtl }, token, stripMux(holder).base, amount);
  }

  private dispatch(ctx: InvokeContext, token: TokenModel, fn: string, args: xdr.ScVal[], res: InvokeResult, used: Set<number>): xdr.ScVal {
    switch (fn) {
      case 'transfer':
        return this.transfer(ctx, token, args, res, used);
      case 'balance': {
        const [id] = expectArgs(args, ['scvAddress']);
        return i128(readBalance({ ...ctx, minPersistentTtl: this.cfg.minPersistentTtl }, token, asAddress(id!)).amount);
      }
      case 'decimals':
        expectArgs(args, []);
        return xdr.ScVal.scvU32(7);
      case 'name':
        expectArgs(args, []);
        return str(token.assetName ?? 'Devnet Token');
      case 'symbol':
        expectArgs(args, []);
        return str(token.assetCode ?? 'DVT');
      default:
        throw new HostError('WasmVm', 'MissingValue', 'trying to invoke non-existent contract function', [sym(fn)]);
    }
  }

  private transfer(ctx: InvokeContext, token: TokenModel, args: xdr.ScVal[], res: InvokeResult, used: Set<number>): xdr.ScVal {
    const [fromV, toV, amountV] = expectArgs(args, ['scvAddress', 'scvAddress', 'scvI128']);
    const from = asAddress(fromV!);
    if (from.type !== 'scAddressTypeAccount' && from.type !== 'scAddressTypeContract') {
      throw new HostError('Value', 'UnexpectedType', 'from must be an account or contract address');
    }
    const { base: to, muxId } = stripMux(asAddress(toV!));
    if (to.type !== 'scAddressTypeAccount' && to.type !== 'scAddressTypeContract') {
      throw new HostError('Value', 'UnexpectedType', 'to must be an account, muxed account or contract address');
    }
    const amount = i128Value(amountV!)!;
    if (amount < 0n) throw new HostError('Contract', TokenError.NegativeAmount, 'negative amount is not allowed', [amountV!]);

    this.requireAuth(ctx, from, token.contractId, 'transfer', args, res, used);
    const instance = ctx.view.get(instanceKey(token.contractId));
    if (instance?.liveUntil !== undefined && instance.liveUntil - ctx.ledgerSeq <= INSTANCE_TTL_THRESHOLD_LEDGERS)
      ctx.view.extendTtl(instanceKey(token.contractId), ctx.ledgerSeq + INSTANCE_EXTEND_LEDGERS);

    const balances = { ...ctx, minPersistentTtl: this.cfg.minPersistentTtl };
    spend(balances, token, from, amount);
    receive(balances, token, to, amount);

    const fromStr = addressString(from);
    const toStr = addressString(to);
    const data =
      muxId === null
        ? i128(amount)
        : xdr.ScVal.scvMap([mapEntry(sym('amount'), i128(amount)), mapEntry(sym('to_muxed_id'), xdr.ScVal.scvU64(muxId))]);
    let topics: xdr.ScVal[];
    if (token.kind === 'custom') topics = [sym('transfer'), xdr.ScVal.scvAddress(from), xdr.ScVal.scvAddress(to)];
    else if (fromStr === token.issuer) topics = [sym('mint'), xdr.ScVal.scvAddress(to), str(token.assetName!)];
    else if (toStr === token.issuer) topics = [sym('burn'), xdr.ScVal.scvAddress(from), str(token.assetName!)];
    else topics = [sym('transfer'), xdr.ScVal.scvAddress(from), xdr.ScVal.scvAddress(to), str(token.assetName!)];
    const ev = contractEvent('contract', token.contractId, topics, data);
    res.contractEvents.push(ev);
    res.diagnostics.push(diag(ev));
    return xdr.ScVal.scvVoid();
  }

  // ---- authorization --------------------------------------------------------------------

  private requireAuth(
    ctx: InvokeContext,
    address: xdr.ScAddress,
    contractId: string,
    fn: string,
    args: xdr.ScVal[],
    res: InvokeResult,
    used: Set<number>,
  ): void {
    const addr = addressString(address);
    const invocation = new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
        new xdr.InvokeContractArgs({ contractAddress: scAddress(contractId), functionName: fn, args }),
      ),
      subInvocations: [],
    });

    if (ctx.authMode !== 'enforce') {
      if (addr === ctx.source) {
        res.recordedAuth.push(
          new xdr.SorobanAuthorizationEntry({
            credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
            rootInvocation: invocation,
          }),
        );
        return;
      }
      const nonce = ctx.randomNonce();
      const creds = new xdr.SorobanAddressCredentials({ address, nonce, signatureExpirationLedger: 0, signature: xdr.ScVal.scvVoid() });
      res.recordedAuth.push(
        new xdr.SorobanAuthorizationEntry({
          credentials: ctx.useUpgradedAuth
            ? xdr.SorobanCredentials.sorobanCredentialsAddressV2(creds)
            : xdr.SorobanCredentials.sorobanCredentialsAddress(creds),
          rootInvocation: invocation,
        }),
      );
      // Recording emulates one signature check (reads the account) and writes the nonce.
      if (address.type === 'scAddressTypeAccount') ctx.view.get(accountKey(addr));
      const liveUntil = ctx.ledgerSeq + this.cfg.maxEntryTtl - 1;
      const key = nonceKey(address, nonce);
      ctx.view.put(key, contractDataEntry(key, xdr.ScVal.scvVoid()), liveUntil);
      return;
    }

    const wanted = invocation.toXdr('base64');
    const idx = ctx.authEntries.findIndex((e, i) => {
      if (used.has(i)) return false;
      if (e.rootInvocation.toXdr('base64') !== wanted) return false;
      if (e.credentials.type === 'sorobanCredentialsSourceAccount') return addr === ctx.source;
      const ac = addressCredentials(e.credentials);
      return ac !== null && addressString(ac.creds.address) === addr;
    });
    if (idx < 0) {
      throw new HostError('Auth', 'InvalidAction', 'Unauthorized function call for address', [xdr.ScVal.scvAddress(address)]);
    }
    used.add(idx);
    const entry = ctx.authEntries[idx]!;
    const ac = addressCredentials(entry.credentials);
    if (!ac) return; // source-account credentials: covered by the envelope signature
    const { creds, v2 } = ac;

    try {
      authenticateAccount(ctx.view, this.cfg.networkId, address, creds, v2, entry.rootInvocation);
    } catch (e) {
      const inner = e instanceof HostError ? e : new HostError('Auth', 'InternalError', String(e));
      throw new HostError('Auth', 'InvalidAction', 'failed account authentication with error', [
        xdr.ScVal.scvAddress(address),
        xdr.ScVal.scvError(inner.toScError()),
      ]);
    }
    const exp = creds.signatureExpirationLedger;
    if (ctx.ledgerSeq > exp) {
      throw new HostError('Auth', 'InvalidInput', 'signature has expired', [
        xdr.ScVal.scvAddress(address),
        xdr.ScVal.scvU32(ctx.ledgerSeq),
        xdr.ScVal.scvU32(exp),
      ]);
    }
    if (exp > ctx.ledgerSeq + this.cfg.maxEntryTtl - 1) {
      throw new HostError('Auth', 'InvalidInput', 'signature expiration is too late', [
        xdr.ScVal.scvAddress(address),
        xdr.ScVal.scvU32(ctx.ledgerSeq + this.cfg.maxEntryTtl - 1),
        xdr.ScVal.scvU32(exp),
      ]);
    }
    const key = nonceKey(address, creds.nonce);
    const existing = ctx.view.get(key);
    if (existing && (existing.liveUntil ?? 0) >= ctx.ledgerSeq) {
      throw new HostError('Auth', 'ExistingValue', 'nonce already exists for address', [xdr.ScVal.scvAddress(address)]);
    }
    const liveUntil = Math.max(exp, ctx.ledgerSeq + this.cfg.minTempTtl - 1);
    ctx.view.put(key, contractDataEntry(key, xdr.ScVal.scvVoid()), liveUntil, exp);
  }
}

function asAddress(v: xdr.ScVal): xdr.ScAddress {
  if (v.type !== 'scvAddress') throw new HostError('Value', 'UnexpectedType', 'expected an address');
  return v.address;
}

function expectArgs(args: xdr.ScVal[], types: string[]): xdr.ScVal[] {
  if (args.length !== types.length) {
    throw new HostError('WasmVm', 'UnexpectedSize', `function expects ${types.length} arguments, got ${args.length}`);
  }
  args.forEach((a, i) => {
    if (a.type !== types[i]) throw new HostError('Value', 'UnexpectedType', `argument ${i} must be ${types[i]}`);
  });
  return args;
}
