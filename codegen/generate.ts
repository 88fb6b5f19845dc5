/**
 * Turns openapi.yaml (the hand-written source of truth) into TypeScript types with
 * openapi-typescript. `npm run codegen` writes src/generated/openapi.ts; a test regenerates in
 * memory and fails when the committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { parse } from 'yaml';

export const DOCUMENT_PATH = fileURLToPath(new URL('../openapi.yaml', import.meta.url));
export const GENERATED_PATH = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

const BANNER = '/* Generated from openapi.yaml by `npm run codegen` (codegen/generate.ts). Do not edit. */\n\n';

/** The text src/generated/openapi.ts must hold for the current openapi.yaml. */
export async function generateTypes(): Promise<string> {
  const document = parse(await readFile(DOCUMENT_PATH, 'utf8')) as Parameters<typeof openapiTS>[0];
  const ast = await openapiTS(document, { alphabetize: false, exportType: false });
  return BANNER + astToString(ast);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(GENERATED_PATH, await generateTypes());
  console.log(`codegen: wrote ${GENERATED_PATH}`);
}
