// One linter for the whole repository: typescript-eslint's recommended rules, type-aware.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/.*-dist/**', '**/node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules for every TypeScript file, through the tsconfig that type-checks it.
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeCheckedOnly],
    languageOptions: {
      parserOptions: {
        // Sources through the configs that build them (stricter), tests through the test configs.
        project: [
          './apps/server/tsconfig.json',
          './apps/server/browser/tsconfig.json',
          './packages/client/tsconfig.json',
          './examples/partner-site/tsconfig.json',
          './apps/server/tsconfig.test.json',
          './packages/client/tsconfig.test.json',
          './examples/partner-site/tsconfig.test.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // Fastify plugins and hooks are async by contract (a returned promise is how Fastify knows
      // they are done), and test doubles implement async interfaces synchronously.
      '@typescript-eslint/require-await': 'off',
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  {
    // Tests read answers as `any` (`TestResponse.json()`) on purpose: they inspect bodies of every
    // shape, and an assertion is what checks the shape. Source code gets every unsafe-any rule.
    files: ['**/test/**/*.ts', '**/*.test.ts', '**/*.test.tsx'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // CommonJS files (tool configurations) load their modules with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Scripts the example site and the dashboard serve to browsers.
    files: ['examples/*/public/**/*.js', 'apps/server/public/**/*.js', 'apps/server/browser/*.ts'],
    languageOptions: { globals: globals.browser },
  },
);
