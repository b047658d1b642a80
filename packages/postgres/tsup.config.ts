import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli.ts' },
  format: ['esm', 'cjs'],
  // Types for the library entry only: the CLI is a bin, not an import (a .d.ts of it would
  // hold nothing but its shebang).
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: false,
  target: 'node20',
  // import.meta.url in the CJS build (migrate() finds the shipped migrations/ folder with it).
  shims: true,
});
