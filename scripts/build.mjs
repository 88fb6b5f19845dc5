/**
 * `npm run build`: what `npm start` runs. esbuild bundles each entry point with its dependencies
 * into ES modules under dist/ (the main process and the two worker threads), because loading
 * hundreds of separate modules was most of svc's startup (docs/BENCHMARKS.md "Startup to ready").
 * Types are checked by `npm run typecheck`, not here. Run by plain Node: no tsx in the build or
 * at run time.
 *
 * What else keeps spawn → /ready short (docs/OPERATIONS.md "Startup"):
 * - whitespace and syntax minified (names kept, so logs and stacks still name functions): Node
 *   reads, decodes and parses every byte of the bundle before running a line of it, and comments
 *   were a third of it;
 * - code splitting: a module imported with `import()` (undici, the MCP SDK) becomes a chunk of its
 *   own, read when first used instead of at start-up;
 * - dist/openapi.json: openapi.yaml parsed once here, with the SHA-256 of the text it came from
 *   (src/http/contract.ts uses it only while that text is unchanged);
 * - LAZY_MODULES: modules svc imports but does not call on its way to ready, bundled behind a
 *   stand-in that evaluates them on first use.
 */
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { parse } from 'yaml';

/**
 * Modules the main bundle imports whose evaluation svc's start-up does not need, each replaced by a
 * stand-in with the same exports that evaluates the real module (bundled as usual: esbuild defers
 * a module reached through `require()` until that call) the first time one of them is called
 * (docs/OPERATIONS.md "Startup"). `importer` limits a stand-in to one importing file (a path
 * suffix); `exports` is what it forwards: a default class or function, or functions by name. The
 * build fails when an entry matches no import or names an export the real module lacks, so an
 * upgrade cannot quietly bring one back to start-up or break it.
 * @type {{ specifier: string, importer: string, exports: 'class' | 'function' | string[] }[]}
 */
const LAZY_MODULES = [
  // openapi-backend's document validation (svc skips it: src/http/contract.ts `validateDefinition`),
  // $ref parser (quick mode dereferences synchronously; `loadDocument` is overridden there) and
  // mock responses (never used).
  { specifier: 'openapi-schema-validator', importer: 'openapi-backend/backend.js', exports: 'class' },
  { specifier: './refparser', importer: 'openapi-backend/backend.js', exports: ['dereference', 'parse', 'resolve'] },
  { specifier: 'mock-json-schema', importer: 'openapi-backend/backend.js', exports: ['mock'] },
  // YAML: only when dist/openapi.json does not match openapi.yaml (src/http/contract.ts parseDocument).
  { specifier: 'yaml', importer: 'src/http/contract.ts', exports: ['parse'] },
  // Unicode's confusables table: the first listing URL with an internationalized host (src/net/idn-hosts.ts).
  { specifier: 'unhomoglyph', importer: 'src/net/idn-hosts.ts', exports: 'function' },
  // The x402 library's response parsers and its zod schemas (zod included): the first probe of a
  // listing's live 402 answer (src/net/live-402.ts).
  { specifier: '@x402/core/http', importer: 'src/net/live-402.ts', exports: ['decodePaymentRequiredHeader'] },
  { specifier: '@x402/core/schemas', importer: 'src/net/live-402.ts', exports: ['parsePaymentRequired'] },
];

/**
 * The stand-in's source for the real module at `path`, after checking that it has what is forwarded.
 * @param {string} path
 * @param {'class' | 'function' | string[]} exports
 */
function standIn(path, exports) {
  /** @type {unknown} */
  const real = createRequire(import.meta.url)(path);
  /** @param {string} name */
  const exported = (name) =>
    (typeof real === 'object' || typeof real === 'function') && real !== null && typeof Reflect.get(real, name) === 'function';
  /** @type {string[]} */
  let forward;
  if (exports === 'class') {
    if (!exported('default')) throw new Error(`${path} no longer exports a default class as LAZY_MODULES expects`);
    forward = ['export default class { constructor(...args) { return new (real().default)(...args); } }'];
  } else if (exports === 'function') {
    if (typeof real !== 'function') throw new Error(`${path} no longer exports a function as LAZY_MODULES expects`);
    forward = ['export default function (...args) { return real()(...args); }'];
  } else {
    const missing = exports.filter((name) => !exported(name));
    if (missing.length > 0) throw new Error(`${path} no longer exports ${missing.join(', ')} as LAZY_MODULES expects`);
    forward = exports.map((name) => `export function ${name}(...args) { return real().${name}(...args); }`);
  }
  return ['let loaded;', `function real() { return (loaded ??= require(${JSON.stringify(path)})); }`, ...forward].join('\n');
}

/** @type {import('esbuild').Plugin} */
const lazyModules = {
  name: 'lazy-modules',
  setup(build) {
    const used = new Set();
    for (const [i, lazy] of LAZY_MODULES.entries()) {
      const filter = new RegExp(`^${lazy.specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
      build.onResolve({ filter }, async (args) => {
        if (args.pluginData === 'real' || !args.importer.replaceAll('\\', '/').endsWith(lazy.importer)) return undefined;
        const resolved = await build.resolve(args.path, { kind: 'require-call', resolveDir: args.resolveDir, pluginData: 'real' });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        used.add(i);
        return { path: resolved.path, namespace: 'lazy', pluginData: i };
      });
    }
    build.onLoad({ filter: /.*/, namespace: 'lazy' }, (args) => ({
      contents: standIn(args.path, LAZY_MODULES[Number(args.pluginData)].exports),
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
    build.onEnd(() => {
      const unused = LAZY_MODULES.filter((_, i) => !used.has(i)).map((lazy) => `${lazy.specifier} from ${lazy.importer}`);
      if (unused.length > 0) throw new Error(`LAZY_MODULES matched no import: ${unused.join('; ')}`);
    });
  },
};

/**
 * Node's built-in modules reached through `require` instead of `import` (docs/OPERATIONS.md
 * "Startup"). An ES module import of a built-in makes Node build a module namespace from every
 * property of its exports, getters included, and node:http's `WebSocket`, `CloseEvent` and
 * `MessageEvent` getters load Node's whole fetch implementation (undici) to answer: about 0.1 CPU-s
 * of start-up for classes svc never uses. `require` hands back the exports object itself, whose
 * properties are read only where svc reads them.
 * @type {import('esbuild').Plugin}
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(build) {
    build.onResolve({ filter: /^[a-z:_/]+$/ }, (args) =>
      args.kind === 'import-statement' && isBuiltin(args.path) ? { path: args.path, namespace: 'builtin' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

const COMMON = {
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  // Bundled CommonJS dependencies call require() for Node built-ins (and Ajv for its runtime
  // helpers); an ES module has no require, so each bundle gets one resolving from its own file.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [builtinsByRequire],
};

const started = performance.now();
rmSync('dist', { recursive: true, force: true });
// The main process, split: a CommonJS package loaded with import() then has only a default export
// (its module.exports), so src/ reads such a package's import() through `.default`.
await build({
  ...COMMON,
  entryPoints: ['src/main.ts'],
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [builtinsByRequire, lazyModules],
});
// The worker threads, each one file as before: they load little, and the schema worker's import() of
// Ajv keeps its named exports.
await build({ ...COMMON, entryPoints: ['src/catalog/threads/worker.ts', 'src/catalog/ingest/schema-worker.ts'] });
// The agent tool server: `npm run mcp` starts this bundle when it is current (scripts/run-ts.mjs), about
// a second of CPU where tsx took three, and so do the tests whose subject is the tool server.
await build({ ...COMMON, entryPoints: ['src/mcp/main.ts'] });
// svc's seller toolkit as scripts import it (`svc/client`), for `npm run ts` (scripts/run-ts.mjs): svc's
// own code only, its packages left to node_modules, so a script and the toolkit share one copy of each.
await build({ ...COMMON, entryPoints: ['src/client/index.ts'], packages: 'external' });
// `npm run migrate`'s script (run from source under tsx), bundled likewise for the tests of its
// exit codes and output: about half a second of CPU a run where tsx took nearly three.
await build({ ...COMMON, entryPoints: ['src/migrate.ts'] });

const openapi = readFileSync('openapi.yaml', 'utf8');
/** @type {unknown} */
const document = parse(openapi);
writeFileSync('dist/openapi.json', JSON.stringify({ sha256: createHash('sha256').update(openapi).digest('hex'), document }));

// Node's compile cache (dist/.compile-cache, scripts/start.sh's NODE_COMPILE_CACHE), filled by one
// Node that imports what a start imports: the chunks dist/main.js loads once the configuration is
// valid (its `import()`s: the service), then dist/main.js itself, which stops at the configuration
// check (no variables are passed: exit 78). So the first `npm start` after a build skips compiling
// as later ones do. Node keys each entry on the file's path and checks a hash of its content before
// using it, so no entry outlives the code it was made from.
const afterConfig = [...readFileSync('dist/main.js', 'utf8').matchAll(/import\("(\.\/chunks\/[^"]+\.js)"\)/g)].map((m) => m[1]);
if (afterConfig.length === 0) throw new Error('dist/main.js imports no chunk after its configuration check: update the compile cache step');
const warm = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    [...afterConfig.map((p) => `dist/${p.slice(2)}`), 'dist/main.js'].map((p) => `await import('./${p}');`).join('\n'),
  ],
  {
    env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: 'dist/.compile-cache' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  },
);
if (warm.status !== 78) throw new Error(`filling the compile cache: dist/main.js exited ${warm.status ?? warm.signal}: ${warm.stderr}`);

/**
 * The files under `dir` (paths relative to it, `/`-separated) with their sizes.
 * @param {string} dir
 * @returns {{ path: string, bytes: number }[]}
 */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((path) => ({ path: path.replaceAll('\\', '/'), stat: statSync(join(dir, path)) }))
    .filter(({ stat }) => stat.isFile())
    .map(({ path, stat }) => ({ path, bytes: stat.size }));
}

// One line saying what was built, where, and what runs it.
const built = filesUnder('dist').filter(({ path }) => !path.startsWith('.compile-cache/'));
const chunks = built.filter(({ path }) => path.startsWith('chunks/')).length;
const megabytes = (built.reduce((sum, { bytes }) => sum + bytes, 0) / 1e6).toFixed(1);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
process.stdout.write(
  `build: dist/ in ${seconds} s, ${megabytes} MB: main.js with ${chunks} chunks (npm start), the catalog and schema worker threads, ` +
    `mcp/main.js (npm run mcp), client/index.js (svc/client for npm run ts), migrate.js, openapi.json, and the compile cache\n`,
);
