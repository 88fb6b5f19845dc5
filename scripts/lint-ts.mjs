/**
 * `npm run lint:ts`: the typecheck of tsconfig.json and ESLint (eslint.config.js) over one
 * TypeScript program. typescript-eslint's type-checked rules need the program `tsc --noEmit`
 * builds and checks; built once here (`parserOptions.programs`), the rules read the types the
 * typecheck already computed instead of a second program checking every file again (about 20
 * CPU-s of `npm test`, docs/TESTING.md "Time"). `npx eslint .` and `npm run typecheck` still run
 * each alone, with the same configuration. Run by plain Node.
 */
import process from 'node:process';
import { ESLint } from 'eslint';
import ts from 'typescript';

const root = process.cwd();
/** @type {ts.FormatDiagnosticsHost} */
const formatHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => ts.sys.newLine };

/**
 * Prints diagnostics as tsc does (with context on a terminal).
 * @param {readonly ts.Diagnostic[]} diagnostics
 */
function report(diagnostics) {
  if (diagnostics.length === 0) return;
  const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  process.stdout.write(format(diagnostics, formatHost));
}

/** @type {ts.Diagnostic[]} */
const configDiagnostics = [];
const config = ts.getParsedCommandLineOfConfigFile(
  'tsconfig.json',
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => configDiagnostics.push(diagnostic) },
);
if (config === undefined) {
  report(configDiagnostics);
  process.exit(2);
}
const program = ts.createProgram({
  rootNames: config.fileNames,
  options: config.options,
  projectReferences: config.projectReferences,
  configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
});
const typeErrors = ts.getPreEmitDiagnostics(program);
report(typeErrors);

// Every TypeScript file ESLint lints is in tsconfig.json's program; the JavaScript ones keep the
// configuration's own parser options.
const eslint = new ESLint({
  overrideConfig: { files: ['**/*.ts'], languageOptions: { parserOptions: { programs: [program], projectService: false } } },
});
const results = await eslint.lintFiles(['.']);
const formatter = await eslint.loadFormatter('stylish');
const output = await formatter.format(results);
if (output) process.stdout.write(output);

const lintErrors = results.reduce((sum, result) => sum + result.errorCount + result.fatalErrorCount, 0);
if (typeErrors.length > 0 || lintErrors > 0) {
  process.stdout.write(`\n${typeErrors.length} type error(s), ${lintErrors} lint error(s)\n`);
  process.exitCode = 1;
}
