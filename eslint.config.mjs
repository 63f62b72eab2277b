import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'coverage/**', 'tests/artifacts/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // tsconfig.test.json covers sources, unit and e2e tests and scripts, resolving @assistant/shared
        // to its sources so lint needs no build.
        project: ['./tsconfig.test.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    // The web console's tsconfig reaches the shared package through project references, which the
    // project service follows to their sources: no build needed either.
    files: ['services/gateway/web/**/*.ts'],
    languageOptions: { parserOptions: { project: false, projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-console': 'error',
      // An async callback without await still turns a throw into a rejection, as Promise-returning hooks expect.
      '@typescript-eslint/require-await': 'off',
      // We declare no enums; the MCP SDK's errors carry plain numeric codes, compared with its own ErrorCode.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
  {
    // The HTTP client of the tests and the bench reads loosely typed JSON bodies; tests use their
    // fields as they come (an unexpected shape fails the test's own assertions).
    files: ['tests/**/*.ts', '**/*.test.ts', 'scripts/lib/api.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Type tests hold lines that must not compile; what those lines touch has an error type on purpose.
    files: ['**/*.test-d.ts'],
    rules: { '@typescript-eslint/no-unsafe-argument': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        URL: 'readonly',
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
