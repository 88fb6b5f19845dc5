// ESLint (flat config): typescript-eslint's recommended type-checked rules over the TypeScript
// sources; formatting is Prettier's (eslint-config-prettier turns the overlapping rules off).
import { join } from 'node:path';
import js from '@eslint/js';
import { includeIgnoreFile } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // What git ignores is no source of the project (build output, data, a developer's scratch/ and
  // .scratch-*/ scripts, test artifacts); Prettier reads .gitignore the same way.
  includeIgnoreFile(join(import.meta.dirname, '.gitignore')),
  // test/sdk/consumers/ is compiled against SDKs generated at test time (test/sdk/generators.test.ts).
  { ignores: ['src/generated/', 'test/sdk/consumers/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `_`-prefixed parameters are deliberately unused (interface conformance).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read untyped JSON bodies on purpose (the contract helper checks them against openapi.yaml).
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Test doubles implement async ports with answers ready at once.
      '@typescript-eslint/require-await': 'off',
      // Tests compare the SDK's string enums (e.g. a transaction status) with the literals the RPC sends.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  // The explorer's module runs in the browser (served as-is from public/, no build step).
  { files: ['public/**/*.js'], languageOptions: { globals: globals.browser } },
  prettier,
);
