/**
 * The two pages svc serves to people, each with a Content-Security-Policy that lets it reach svc's
 * own origin only (so they work offline and leak nothing):
 * - GET /docs: the API reference, Scalar's standalone renderer (the `@scalar/api-reference` npm
 *   package, served at /docs/api-reference.js: no CDN) reading GET /docs/openapi.json (openapi.yaml
 *   with examples from this catalog);
 * - GET /: the catalog explorer (public/explorer/, docs/EXPLORER.md), plain HTML, CSS and one ES
 *   module over svc's public discovery API.
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { CatalogPort } from '../catalog/types.ts';
import { parseDocument } from '../http/contract.ts';
import { projectFile } from '../files.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import { requesterOf } from './discovery.ts';
import type { AssetInfo } from '../scheme/types.ts';

const EXPLORER_DIR = projectFile('public/explorer');
export const API_REFERENCE_SCRIPT_PATH = '/docs/api-reference.js';

/** Same-origin only; `extra` widens single directives (e.g. the explorer shows sellers' https icons). */
function contentSecurityPolicy(extra: Record<string, string> = {}): string {
  const directives: Record<string, string> = {
    'default-src': "'none'",
    'script-src': "'self'",
    'style-src': "'self' 'unsafe-inline'",
    'img-src': "'self' data:",
    'font-src': "'self' data:",
    'connect-src': "'self'",
    'base-uri': "'none'",
    'form-action': "'none'",
    'frame-ancestors': "'none'",
    ...extra,
  };
  return Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

// Scalar's Test Request previews an HTML answer (e.g. GET /) in a sandboxed frame of a blob: URL it makes.
export const DOCS_CSP = contentSecurityPolicy({ 'frame-src': 'blob:' });
// Icons are sellers' https URLs (never http, so a page served over https mixes nothing in);
// the explorer's styles are its own file, so no inline styles either.
export const EXPLORER_CSP = contentSecurityPolicy({ 'img-src': "'self' data: https:", 'style-src': "'self'" });

function page(html: string, csp: string): SvcMiddleware {
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', csp);
    ctx.body = html;
  };
}

/** A file served as is; `maxAge` seconds of caching. */
function staticFile(file: string, type: string, maxAge: number): SvcMiddleware {
  statSync(file); // missing at startup, not at the first request
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.type = type;
    ctx.set('Cache-Control', `public, max-age=${maxAge}`);
    ctx.body = createReadStream(file);
  };
}

// ---- GET /docs --------------------------------------------------------------------------------

/**
 * The reference only: system fonts (no fonts.scalar.com), no telemetry, none of Scalar's hosted
 * features (API client, AI agent, MCP generator, developer tools), every tag group open.
 */
const SCALAR_CONFIGURATION = {
  url: '/docs/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  defaultOpenAllTags: true,
};

const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>svc API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="/docs/openapi.json" data-configuration="${JSON.stringify(SCALAR_CONFIGURATION).replaceAll('"', '&quot;')}"></script>
    <script src="${API_REFERENCE_SCRIPT_PATH}"></script>
  </body>
</html>
`;

export const apiReferencePageHandler = (): SvcMiddleware => page(DOCS_PAGE, DOCS_CSP);

type OpenApiParameter = { name?: string; in?: string; example?: unknown };
type OpenApiDocument = { paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>> };

/**
 * The seller of the newest listing this catalog shows, by the address GET /discovery/merchant
 * finds it under (one of its terms' payTo); undefined when there is none or the catalog cannot say.
 */
async function newestSeller(catalog: CatalogPort, ctx: SvcContext): Promise<string | undefined> {
  try {
    const [newest] = (await catalog.list({}, { limit: 1, offset: 0 }, requesterOf(ctx))).items;
    const payees = new Set((newest?.accepts ?? []).map((terms) => (terms as { payTo?: unknown }).payTo));
    for (const payTo of payees) {
      if (typeof payTo !== 'string') continue;
      const page = await catalog.list({ payTo }, { limit: 1, offset: 0 }, requesterOf(ctx));
      if (page.items.length > 0) return payTo;
    }
  } catch {
    /* busy or unavailable: the document's own example */
  }
  return undefined;
}

/** `document` with GET /discovery/merchant's `payTo` example set to `payTo`; nothing else changed. */
function withMerchantExample(document: OpenApiDocument, payTo: string): OpenApiDocument {
  const item = document.paths['/discovery/merchant']!;
  const get = item.get!;
  const parameters = get.parameters?.map((p) => (p.in === 'query' && p.name === 'payTo' ? { ...p, example: payTo } : p));
  return { ...document, paths: { ...document.paths, '/discovery/merchant': { ...item, get: { ...get, parameters } } } };
}

/**
 * GET /docs/openapi.json: the document the reference page reads, openapi.yaml with GET
 * /discovery/merchant's `payTo` example taken from this catalog (its newest listing's seller), so
 * that Test Request there shows listings as it does on the list and search, whose examples name no
 * seller. The seller changes with the catalog (a new one each `npm run dev`), so it is read per request.
 */
export function apiReferenceDocumentHandler(yaml: string, catalog: CatalogPort): SvcMiddleware {
  let document: OpenApiDocument | undefined;
  // The last text served, by seller: the 200 KB document is not serialized again on the thread that answers payments.
  let last: { payTo: string | undefined; text: string } | undefined;
  return async (ctx: SvcContext) => {
    const payTo = await newestSeller(catalog, ctx);
    if (last === undefined || last.payTo !== payTo) {
      document ??= parseDocument(yaml) as OpenApiDocument;
      last = { payTo, text: JSON.stringify(payTo === undefined ? document : withMerchantExample(document, payTo)) };
    }
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'application/json';
    ctx.body = last.text;
  };
}

/** The renderer's file inside the installed package: its `browser` entry, beside its main dist/index.js. */
export function apiReferenceScriptFile(): string {
  return join(dirname(createRequire(projectFile('package.json')).resolve('@scalar/api-reference')), 'browser/standalone.js');
}

// The file changes only with the package version, so a day of caching is safe.
export const apiReferenceScriptHandler = (): SvcMiddleware =>
  staticFile(apiReferenceScriptFile(), 'text/javascript; charset=utf-8', 86_400);

// ---- GET / (the catalog explorer) -------------------------------------------------------------

/**
 * The explorer page with the tokens svc knows (code and decimals, for prices in units) embedded
 * as JSON data; `<` is escaped so no value can close the script element.
 */
export function explorerPageHandler(knownAssets: AssetInfo[]): SvcMiddleware {
  const html = readFileSync(join(EXPLORER_DIR, 'index.html'), 'utf8').replace(
    '__KNOWN_ASSETS__',
    JSON.stringify(knownAssets).replaceAll('<', '\\u003c'),
  );
  return page(html, EXPLORER_CSP);
}

// Short caching: the files change with svc's own releases.
export const explorerScriptHandler = (): SvcMiddleware =>
  staticFile(join(EXPLORER_DIR, 'explorer.js'), 'text/javascript; charset=utf-8', 300);
export const explorerStyleHandler = (): SvcMiddleware => staticFile(join(EXPLORER_DIR, 'explorer.css'), 'text/css; charset=utf-8', 300);
