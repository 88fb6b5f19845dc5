/**
 * GET /docs: the API reference page, Scalar's standalone renderer (the `@scalar/api-reference` npm
 * package, served by svc itself at /docs/api-reference.js: no CDN) reading GET /openapi.yaml. The
 * page's Content-Security-Policy lets it reach svc only, so it works offline and cannot leak.
 */
import { createReadStream, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';

export const API_REFERENCE_SCRIPT_PATH = '/docs/api-reference.js';

/**
 * The reference only: system fonts (no fonts.scalar.com), no telemetry, none of Scalar's hosted
 * features (API client, AI agent, MCP generator, developer tools), every tag group open.
 */
const SCALAR_CONFIGURATION = {
  url: '/openapi.yaml',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  defaultOpenAllTags: true,
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>svc API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="/openapi.yaml" data-configuration="${JSON.stringify(SCALAR_CONFIGURATION).replaceAll('"', '&quot;')}"></script>
    <script src="${API_REFERENCE_SCRIPT_PATH}"></script>
  </body>
</html>
`;

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function apiReferencePageHandler(): SvcMiddleware {
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.body = PAGE;
  };
}

/** The renderer's file inside the installed package (resolved once, at startup). */
export function apiReferenceScriptFile(): string {
  const require = createRequire(import.meta.url);
  // The package's `browser` entry: dist/browser/standalone.js beside its main dist/index.js.
  const file = join(dirname(require.resolve('@scalar/api-reference')), 'browser/standalone.js');
  statSync(file);
  return file;
}

export function apiReferenceScriptHandler(file = apiReferenceScriptFile()): SvcMiddleware {
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.type = 'text/javascript; charset=utf-8';
    // The file changes only with the package version, so a day of caching is safe.
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(file);
  };
}
