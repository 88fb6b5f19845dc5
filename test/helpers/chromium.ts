/**
 * Vitest global setup: the browser tests need Chromium; src/dev/chromium.ts installs it when absent.
 */
import { ensureChromium } from '../../src/dev/chromium.ts';

export { CHROMIUM_PATH } from '../../src/dev/chromium.ts';

export default function setup(): void {
  ensureChromium();
}
