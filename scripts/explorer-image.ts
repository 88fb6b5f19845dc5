/**
 * Remakes docs/images/explorer.png, README's picture of the catalog explorer (docs/EXPLORER.md),
 * from the real `npm run dev` story: the demo sellers' listings, created by the story's settled
 * payments, with the Demo Weather listing open (price, parameters and both snippets). Headless
 * Chromium (src/dev/chromium.ts) at 1280×1120, the viewport only.
 *
 *   npx tsx scripts/explorer-image.ts                         # starts its own npm run dev, then stops it
 *   npx tsx scripts/explorer-image.ts http://127.0.0.1:4021   # uses a npm run dev already running
 *
 * Its own run uses README's fixed ports (so the listings show 127.0.0.1:4100 and :4101) and a
 * temporary data directory; with those ports taken, pass the running stack's URL instead.
 */
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, ensureChromium } from '../src/dev/chromium.ts';
import { startDevRun, type DevRun } from '../test/helpers/dev-run.ts';

const OUT = fileURLToPath(new URL('../docs/images/explorer.png', import.meta.url));
/** Above this the README's first image gets slow on a poor connection. */
const MAX_BYTES = 300 * 1024;

async function main(): Promise<void> {
  let dev: DevRun | undefined;
  let svcUrl = process.argv[2];
  if (!svcUrl) {
    process.stdout.write('starting npm run dev …\n');
    dev = await startDevRun({ ephemeral: false });
    svcUrl = dev.svcUrl;
  }
  ensureChromium();
  // --no-sandbox: as root (CI, containers) Chromium's sandbox refuses to start.
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1120 }, locale: 'en-US', timezoneId: 'UTC' });
    await page.goto(`${svcUrl}/`);
    const weather = page.locator('#results .listing', { hasText: 'Demo Weather' });
    await weather.waitFor({ timeout: 30_000 });
    await weather.click();
    await page.locator('#detail h2', { hasText: 'Demo Weather' }).waitFor();
    await page.evaluate('document.activeElement.blur(); window.scrollTo(0, 0)');
    await page.screenshot({ path: OUT });
  } finally {
    await browser.close();
    await dev?.stop();
  }
  const bytes = statSync(OUT).size;
  process.stdout.write(`wrote ${OUT} (${Math.round(bytes / 1024)} KB)\n`);
  if (bytes > MAX_BYTES) throw new Error(`${OUT} is over ${MAX_BYTES / 1024} KB: shrink the viewport or the content`);
}

main().catch((err: unknown) => {
  process.stderr.write(`explorer-image: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
