import { defineConfig, type Options } from 'tsup';

/** Shared build of every published package: ESM + CJS + .d.ts for Node 20.
 *  The d.ts build resolves `@postern/*` to the BUILT packages (empty `paths`), so a
 *  package's types import `@postern/core` instead of inlining copies of its types. */
export function packageConfig(entry: Record<string, string>, extra: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: { compilerOptions: { paths: {} } },
    clean: true,
    sourcemap: true,
    target: 'node20',
    ...extra,
  });
}
