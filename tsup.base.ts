import { defineConfig, type Options } from 'tsup';

/** Shared build of every published package: ESM + CJS + .d.ts for Node 20.
 *  The d.ts build resolves `@postern/*` to the BUILT packages (empty `paths`), so a
 *  package's types import `@postern/core` instead of inlining copies of its types.
 *  No source maps: the tarballs ship `dist` only, and a map pointing at `src/` files that are
 *  not in the tarball sends debuggers and stack-trace tools to files that do not exist; the
 *  output is not minified, so stack traces into `dist` read as they are. */
export function packageConfig(entry: Record<string, string>, extra: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: { compilerOptions: { paths: {} } },
    clean: true,
    sourcemap: false,
    target: 'node20',
    ...extra,
  });
}
