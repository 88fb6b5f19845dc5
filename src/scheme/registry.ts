/**
 * The scheme registry: verify, settle and supported by dispatch on (x402Version, scheme,
 * network), then the after-settle extension hooks. The HTTP handlers call only this; a new chain
 * or scheme is one `register` call in the composition root (docs/ARCHITECTURE.md).
 */
import { defaultMessage, type SchemeCode, type ServiceCode } from '../codes.ts';
import type {
  AssetInfo,
  CoreLogger,
  FacilitatorExtension,
  PaymentPayload,
  PaymentRequirements,
  PaymentScheme,
  SettleResponse,
  SettledPayment,
  SettleResult,
  SettlementGate,
  SupportedKind,
  SupportedResponse,
  VerifyResponse,
  VerifyResult,
} from './types.ts';

/** The body of /verify and /settle once the envelope checks passed. */
export interface PaymentEnvelope {
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

/** A settle response and the EXTENSION-RESPONSES entries the hooks added (null: no header). */
export interface SettleOutcome {
  response: SettleResponse;
  extensionResponses: Record<string, unknown> | null;
  /** The hash the scheme reported, even on a failure where the response carries "" (for the log). */
  reportedTransaction: string | null;
}

type KindKey = Pick<SupportedKind, 'x402Version' | 'scheme' | 'network'>;

const keyOf = (kind: KindKey): string => JSON.stringify([kind.x402Version, kind.scheme, kind.network]);

const UNSUPPORTED_KIND = 'svc_unsupported_kind' as const;
const TX_HASH = /^[0-9a-f]{64}$/;

export class SchemeRegistry {
  private readonly byKind = new Map<string, PaymentScheme>();
  private readonly schemes: PaymentScheme[] = [];
  private readonly extensions: FacilitatorExtension[] = [];
  private gate: SettlementGate | null = null;

  /** Adds a scheme for every kind it reports; two schemes claiming one kind is a wiring mistake. */
  register(scheme: PaymentScheme): this {
    for (const kind of scheme.supported().kinds) {
      const key = keyOf(kind);
      if (this.byKind.has(key)) throw new Error(`two schemes claim the kind ${key}`);
      this.byKind.set(key, scheme);
    }
    this.schemes.push(scheme);
    return this;
  }

  /** Adds an extension: advertised in /supported, its hook run after each successful settle. */
  extend(extension: FacilitatorExtension): this {
    if (this.extensions.some((e) => e.name === extension.name)) throw new Error(`extension ${extension.name} is registered twice`);
    this.extensions.push(extension);
    return this;
  }

  /**
   * Routes every settle through `gate` (the settlement journal: idempotency, policy, fee budget;
   * docs/OPERATIONS.md). Without one a settle goes straight to the scheme.
   */
  journalWith(gate: SettlementGate): this {
    this.gate = gate;
    return this;
  }

  /** The scheme registered for the envelope's (x402Version, scheme, network), if any. */
  schemeFor(envelope: PaymentEnvelope): PaymentScheme | undefined {
    const { scheme, network } = envelope.paymentRequirements;
    return this.byKind.get(keyOf({ x402Version: envelope.paymentPayload.x402Version, scheme, network }));
  }

  /** GET /supported: every scheme's kinds and signers, every extension's name. */
  supported(): SupportedResponse {
    const kinds: SupportedKind[] = [];
    const signers: Record<string, string[]> = {};
    for (const scheme of this.schemes) {
      const support = scheme.supported();
      kinds.push(...support.kinds);
      for (const [family, addresses] of Object.entries(support.signers)) {
        signers[family] = [...new Set([...(signers[family] ?? []), ...addresses])];
      }
    }
    return { kinds, extensions: this.extensions.map((e) => e.name), signers };
  }

  /**
   * Why svc could not settle an accept of a seller's 402 (POST /discovery/validate), or null: its
   * (x402Version, scheme, network) must be a registered kind and its scheme must not find it
   * malformed (requirementsDefect).
   */
  acceptDefect(x402Version: number, accept: PaymentRequirements): string | null {
    const scheme = this.byKind.get(keyOf({ x402Version, scheme: accept.scheme, network: accept.network }));
    if (!scheme) {
      const kinds = this.supported()
        .kinds.map((k) => `${k.scheme} on ${k.network} (x402 v${k.x402Version})`)
        .join(', ');
      return `svc does not settle ${String(accept.scheme)} on ${String(accept.network)} (x402 v${x402Version}); it settles ${kinds || 'nothing'} (GET /supported).`;
    }
    return scheme.requirementsDefect?.(accept) ?? null;
  }

  /** Every registered scheme's known tokens (the explorer's price units). */
  knownAssets(): AssetInfo[] {
    return this.schemes.flatMap((scheme) => scheme.knownAssets?.() ?? []);
  }

  async verify(envelope: PaymentEnvelope): Promise<VerifyResponse> {
    const scheme = this.schemeFor(envelope);
    if (!scheme) return { isValid: false, invalidReason: UNSUPPORTED_KIND, invalidMessage: unsupportedKindMessage(envelope) };
    // Settle refuses a payload an extension finds malformed, so verify does too (the two agree).
    const refusal = this.payloadRefusal(envelope.paymentPayload);
    if (refusal) return { isValid: false, invalidReason: refusal.code, invalidMessage: refusal.message };
    const result = await scheme.verify(envelope.paymentPayload, envelope.paymentRequirements);
    const response = shapeVerifyResponse(result);
    // What settle's policy and budget would refuse, verify refuses with the same code.
    if (!response.isValid || !this.gate || response.payer === undefined) return response;
    const { payTo, asset, amount, network } = envelope.paymentRequirements;
    const policy = await this.gate.verifyRefusal({ payer: response.payer, payTo, asset, amount, network }, result.feeStroops);
    return policy ? { isValid: false, invalidReason: policy.code, invalidMessage: policy.message, payer: response.payer } : response;
  }

  /** `idempotencyKey`: the request's Idempotency-Key header (read by the journal), null when absent. */
  async settle(envelope: PaymentEnvelope, log: CoreLogger, idempotencyKey: string | null = null): Promise<SettleOutcome> {
    const network = envelope.paymentRequirements.network;
    const scheme = this.schemeFor(envelope);
    if (!scheme) {
      const response: SettleResponse = {
        success: false,
        transaction: '',
        network,
        errorReason: UNSUPPORTED_KIND,
        errorMessage: unsupportedKindMessage(envelope),
      };
      return { response, extensionResponses: null, reportedTransaction: null };
    }
    const { paymentPayload: payload, paymentRequirements: requirements } = envelope;
    const refusal = this.payloadRefusal(payload);
    if (refusal) {
      const response: SettleResponse = {
        success: false,
        transaction: '',
        network,
        errorReason: refusal.code,
        errorMessage: refusal.message,
      };
      return { response, extensionResponses: null, reportedTransaction: null };
    }
    const paymentId = this.extensions.map((e) => e.paymentId?.(payload) ?? null).find((id) => id !== null) ?? null;
    for (const extension of this.extensions) extension.beforeSettle?.(payload);
    const { result, fresh, identity } = this.gate
      ? await this.gate.settle({ scheme, payload, requirements, idempotencyKey, paymentId })
      : { result: await scheme.settle(payload, requirements), fresh: true, identity: null };
    const response = shapeSettleResponse(result, network);
    // The hooks run once per payment: a copy answered from the journal lists nothing again. A
    // hook that faulted leaves the payment unlisted in the journal, whose reconciler tries again.
    let extensionResponses: Record<string, unknown> | null = null;
    if (response.success && fresh) {
      const hooks = await this.runHooks({ ...envelope, response }, log);
      extensionResponses = hooks.entries;
      if (identity !== null && !hooks.faulted) await this.gate?.markListed(identity);
    }
    return {
      response,
      extensionResponses,
      reportedTransaction: typeof result.transaction === 'string' && result.transaction !== '' ? result.transaction : null,
    };
  }

  /** The first refusal an extension has for its part of this payload, or null. */
  private payloadRefusal(payload: PaymentPayload): { code: ServiceCode; message: string } | null {
    for (const extension of this.extensions) {
      const refusal = extension.payloadRefusal?.(payload);
      if (refusal) return refusal;
    }
    return null;
  }

  /**
   * Runs every hook in registration order. The journal's reconciler calls it for a payment it found
   * landed after its request was lost (or whose hook faulted): a fault then rejects, so the record
   * stays unlisted and is retried next pass.
   */
  async afterSettle(settled: SettledPayment, log: CoreLogger): Promise<Record<string, unknown> | null> {
    const { entries, faulted } = await this.runHooks(settled, log);
    if (faulted) throw new Error(`settlement hook faulted (${faulted})`);
    return entries;
  }

  /** Every hook's entry; one that throws is logged and left out, and named in `faulted`. */
  private async runHooks(
    settled: SettledPayment,
    log: CoreLogger,
  ): Promise<{ entries: Record<string, unknown> | null; faulted: string | null }> {
    const entries: Record<string, unknown> = {};
    let faulted: string | null = null;
    for (const extension of this.extensions) {
      if (!extension.afterSettle) continue;
      try {
        const entry = await extension.afterSettle(settled, log);
        if (entry !== null && entry !== undefined) entries[extension.name] = entry;
      } catch (err) {
        log.error({ err, extension: extension.name }, `${extension.name} hook threw; its EXTENSION-RESPONSES entry is omitted`);
        faulted ??= extension.name;
      }
    }
    return { entries: Object.keys(entries).length ? entries : null, faulted };
  }
}

function unsupportedKindMessage(envelope: PaymentEnvelope): string {
  const { scheme, network } = envelope.paymentRequirements;
  return `The (scheme, network) pair (${JSON.stringify(scheme)}, ${JSON.stringify(network)}) is not advertised; check GET /supported.`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `extensions` and `extra` when the scheme set them to objects (anything else is dropped). */
function optionalObjects(result: VerifyResult | SettleResult): Pick<VerifyResponse, 'extensions' | 'extra'> {
  return {
    ...(isObject(result.extensions) ? { extensions: result.extensions } : {}),
    ...(isObject(result.extra) ? { extra: result.extra } : {}),
  };
}

const payerOf = (result: VerifyResult | SettleResult) =>
  typeof result.payer === 'string' && result.payer !== '' ? { payer: result.payer } : {};

/** Shapes a scheme verdict as a VerifyResponse (openapi.yaml), filling the message when empty. */
export function shapeVerifyResponse(result: VerifyResult): VerifyResponse {
  if (result.isValid === true) return { isValid: true, ...payerOf(result), ...optionalObjects(result) };
  // A scheme that rejects without a code is a scheme defect; the rejection still needs a code.
  const code = result.invalidReason ?? 'unexpected_verify_error';
  const message = result.invalidMessage || defaultMessage(code);
  return { isValid: false, invalidReason: code, invalidMessage: message, ...payerOf(result), ...optionalObjects(result) };
}

/** Shapes a scheme result as a SettleResponse (openapi.yaml). A success without a hash is a fault. */
export function shapeSettleResponse(result: SettleResult, requestedNetwork: string): SettleResponse {
  const network = typeof result.network === 'string' && result.network !== '' ? result.network : requestedNetwork;
  if (result.success === true) {
    if (!TX_HASH.test(result.transaction)) throw new Error('scheme reported success without a 64-hex transaction hash');
    return { success: true, transaction: result.transaction, network, ...payerOf(result), ...optionalObjects(result) };
  }
  const code: NonNullable<SettleResponse['errorReason']> = result.errorReason ?? ('unexpected_settle_error' satisfies SchemeCode);
  const message = result.errorMessage || defaultMessage(code);
  // A pending settlement carries the hash of the transaction it broadcast (the SDKs retry on it).
  const pending = code === 'settlement_pending' && TX_HASH.test(result.transaction);
  return {
    success: false,
    transaction: pending ? result.transaction : '',
    network,
    errorReason: code,
    errorMessage: message,
    ...payerOf(result),
    ...optionalObjects(result),
  };
}
