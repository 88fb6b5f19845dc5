/**
 * Tool results (docs/MCP.md): a failure is never thrown as free text; it is a result with
 * isError and structuredContent {errorCode, reason}. Inside the tools a ToolFailure carries the
 * code to the top, where the server turns it (or anything unexpected) into such a result.
 */
import { ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { MCP_CODES, SERVICE_CODES, SETTLE_CODES, VERIFY_CODES } from '../codes.ts';

/** A code the facilitator or the scheme defines: passed through verbatim rather than re-labelled. */
export function isFacilitatorCode(code: unknown): code is string {
  return (
    typeof code === 'string' &&
    (Object.hasOwn(VERIFY_CODES, code) || Object.hasOwn(SETTLE_CODES, code) || Object.hasOwn(SERVICE_CODES, code))
  );
}

export class ToolFailure extends Error {
  constructor(
    /** An agent tool code (McpCode), or a facilitator/scheme code passed through verbatim. */
    readonly code: string,
    reason?: string,
  ) {
    super(reason ?? (MCP_CODES as Record<string, string>)[code] ?? `Failed with code ${code}.`);
    this.name = 'ToolFailure';
  }
}

export function toolError(code: string, reason: string): CallToolResult {
  const structuredContent = { errorCode: code, reason };
  return { isError: true, structuredContent, content: [{ type: 'text', text: JSON.stringify(structuredContent) }] };
}

export function toolSuccess(structuredContent: Record<string, unknown>): CallToolResult {
  return { structuredContent, content: [{ type: 'text', text: JSON.stringify(structuredContent) }] };
}

/** Runs a tool body; a ToolFailure becomes its result, anything else svc_mcp_internal_error. */
export async function asToolResult(run: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return toolSuccess(await run());
  } catch (err) {
    if (err instanceof ToolFailure) return toolError(err.code, err.message);
    return toolError('svc_mcp_internal_error', `${MCP_CODES.svc_mcp_internal_error} ${err instanceof Error ? err.message : String(err)}`);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Tool arguments as an object with only the given keys, else svc_mcp_invalid_arguments. */
export function argumentsObject(args: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (args === undefined) return {};
  if (!isPlainObject(args)) throw new ToolFailure('svc_mcp_invalid_arguments', 'The arguments must be a JSON object.');
  const unknown = Object.keys(args).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw new ToolFailure(
      'svc_mcp_invalid_arguments',
      `Unknown argument ${unknown.map((k) => JSON.stringify(k)).join(', ')}; accepted: ${allowed.join(', ')}.`,
    );
  }
  return args;
}

export function optionalString(args: Record<string, unknown>, name: string, { nonEmpty = true } = {}): string | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || (nonEmpty && value.trim() === ''))
    throw new ToolFailure('svc_mcp_invalid_arguments', `${name} must be a non-empty string.`);
  return value;
}

export function optionalObject(args: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw new ToolFailure('svc_mcp_invalid_arguments', `${name} must be a JSON object.`);
  return value;
}

export { isPlainObject };

/**
 * A JSON-RPC "invalid params" error for a tools/call the server cannot route (an unknown tool).
 * A plain Error with a `code`: the SDK sends a thrown error's `code` and `message` as they are.
 */
export function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: ProtocolErrorCode.InvalidParams });
}
