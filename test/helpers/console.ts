/**
 * Console output a test expects from a third-party package: the stock x402 packages write to the
 * console themselves (@x402/core's HTTPFacilitatorClient logs `[x402] extension responses: …` on
 * every verify and settle that carries EXTENSION-RESPONSES; @x402/stellar's facilitator logs
 * `Simulation error: …` for every payment its simulation refuses). `expectConsole` runs `fn` with
 * the `console[method]` calls whose text matches `pattern` kept instead of printed, and returns
 * them for the test to assert; anything else is printed as usual, so an unexpected message still
 * shows. svc's own logs never go through here (pino, injected by each test).
 *
 *   const { result, lines } = await expectConsole('error', /^Simulation error: /, () => facilitator.verify(p, r));
 *   expect(lines).toEqual([expect.stringMatching(/Error\(Auth, /)]);
 */
import { format } from 'node:util';
import { vi } from 'vitest';

export async function expectConsole<T>(
  method: 'log' | 'info' | 'warn' | 'error',
  pattern: RegExp,
  fn: () => Promise<T>,
): Promise<{ result: T; lines: string[] }> {
  const lines: string[] = [];
  const original = console[method].bind(console);
  const spy = vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
    const text = format(...args);
    if (pattern.test(text)) lines.push(text);
    else original(...args);
  });
  try {
    return { result: await fn(), lines };
  } finally {
    spy.mockRestore();
  }
}

/** The line @x402/core's HTTPFacilitatorClient logs (console.log) for a response with EXTENSION-RESPONSES. */
export const EXTENSION_RESPONSES_LOG = /^\[x402\] extension responses: /;
