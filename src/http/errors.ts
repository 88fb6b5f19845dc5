/**
 * Errors the pipeline throws and the error boundary shapes. Every error is rendered in the shape
 * of the route it happened on (openapi.yaml): VerifyResponse for /verify, SettleResponse for
 * /settle, the ErrorEnvelope everywhere else.
 */
import { defaultMessage, type DelistCode, type ServiceCode, type SettlementCode, type ValidateCode } from '../codes.ts';

/**
 * The codes an error response can carry (`svc_settlement_not_found` only on GET
 * /settlements/{transaction}, `svc_validate_rate_limited` only on POST /discovery/validate, the
 * DelistCode ones only on POST /discovery/delist).
 */
export type ErrorCode = ServiceCode | SettlementCode | Extract<ValidateCode, 'svc_validate_rate_limited'> | DelistCode;

/** A request svc answers with a `svc_*` code and a non-2xx status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string = defaultMessage(code),
    /** Response headers the refusal carries (e.g. `Allow` on a 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const BODY_LIMIT_BYTES = 256 * 1024;
export const BODY_LIMIT_MESSAGE = 'The request body exceeds 256 KiB.';

export type RouteShape = 'verify' | 'settle' | 'envelope';

/** The operationIds whose errors use the payment response shapes. */
export function shapeOf(operationId: string | undefined): RouteShape {
  if (operationId === 'verifyPayment') return 'verify';
  if (operationId === 'settlePayment') return 'settle';
  return 'envelope';
}

/** The body of an error response in the route's shape. `network` is echoed on settle when known. */
export function errorBody(shape: RouteShape, code: ErrorCode, message: string, network?: string): Record<string, unknown> {
  switch (shape) {
    case 'verify':
      return { isValid: false, invalidReason: code, invalidMessage: message };
    case 'settle':
      return { success: false, transaction: '', network: network ?? '', errorReason: code, errorMessage: message };
    case 'envelope':
      return { error: { code, reason: message } };
  }
}
