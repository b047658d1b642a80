import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

// Tests run against sources, so a change is tested without a build step.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@postern\/testkit\/browser$/, replacement: src('testkit/src/browser.ts') },
      { find: /^@postern\/client\/react$/, replacement: src('client/src/react.ts') },
      { find: /^@postern\/client$/, replacement: src('client/src/index.ts') },
      { find: /^@postern\/core\/memory$/, replacement: src('core/src/memory/index.ts') },
      { find: /^@postern\/core\/mailers$/, replacement: src('core/src/mailers/index.ts') },
      { find: /^@postern\/core\/ports$/, replacement: src('core/src/ports/index.ts') },
      { find: /^@postern\/core\/webhook$/, replacement: src('core/src/webhook/public.ts') },
      { find: /^@postern\/core\/internal$/, replacement: src('core/src/internal.ts') },
      { find: /^@postern\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@postern\/(express|fastify|inbox|postgres|testkit)$/, replacement: src('$1/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The closing `N passed, N failed, N skipped` line CI reads.
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
