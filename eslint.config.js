// eslint.config.js — typescript-eslint's type-aware recommended rules over src, test, bench and hack,
// and the rooms rule of docs/architecture.md (hack/lint/rooms.js) over src.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import rooms from './hack/lint/rooms.js';

export default tseslint.config(
  { ignores: ['.exp/**', 'dist/**', 'coverage/**', 'node_modules/**', 'charts/**', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  {
    // docs/architecture.md: each room of src/ imports only the rooms below it, through their index.
    files: ['src/**/*.ts'],
    plugins: { tuna: rooms },
    rules: { 'tuna/rooms': 'error' },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
