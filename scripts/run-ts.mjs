/**
 * `npm run mcp` and `npm run ts -- <file.ts> [args]`: a TypeScript entry point started from the
 * build when dist/ is current (scripts/dist-current.mjs), through tsx when it is not.
 *
 * - svc's own entry points with a bundle (src/mcp/main.ts → dist/mcp/main.js) run the bundle: about
 *   0.3 CPU-s to connect where tsx took over a second, which desktop MCP clients pay on every launch.
 * - Any other file (a seller script under scratch/, docs/SELLER.md) runs on Node's own type
 *   stripping, with `svc/client` served by its bundle (dist/client/index.js); a file whose
 *   TypeScript Node cannot strip (enums, parameter properties) runs through tsx.
 *
 * In this process, so stdio (the MCP transport) and signals are the script's own. Prints nothing.
 */
import { registerHooks } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { distIsCurrent } from './dist-current.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** svc's entry points that have a bundle of their own (scripts/build.mjs). */
const BUNDLED = { 'src/mcp/main.ts': 'mcp/main.js' };

const [file, ...args] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npm run ts -- <file.ts> [args…]\n');
  process.exit(2);
}
// npm runs a script from the project root; a relative path is the caller's, from where npm was run (INIT_CWD).
const path = resolve(process.env.INIT_CWD ?? process.cwd(), file);
// The script sees the arguments it would see started directly: process.argv[2] is its first.
process.argv = [process.argv[0], path, ...args];

/** @param {string} specifier */
const runTsx = async (specifier) => {
  const { register } = await import('tsx/esm/api');
  register();
  await import(specifier);
};

const bundle = Object.entries(BUNDLED).find(([source]) => join(ROOT, source) === path)?.[1];
if (bundle && distIsCurrent(ROOT, bundle)) {
  await import(pathToFileURL(join(ROOT, 'dist', bundle)).href);
} else if (!bundle && distIsCurrent(ROOT, 'client/index.js')) {
  const client = pathToFileURL(join(ROOT, 'dist/client/index.js')).href;
  registerHooks({
    resolve: (specifier, context, next) => (specifier === 'svc/client' ? { url: client, shortCircuit: true } : next(specifier, context)),
  });
  try {
    await import(pathToFileURL(path).href);
  } catch (err) {
    const code = /** @type {{ code?: string }} */ (err).code;
    if (code !== 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' && code !== 'ERR_INVALID_TYPESCRIPT_SYNTAX') throw err;
    // Syntax Node does not strip: nothing of the file ran.
    await runTsx(`${pathToFileURL(path).href}?tsx`);
  }
} else {
  await runTsx(pathToFileURL(path).href);
}
