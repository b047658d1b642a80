import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations
import { buildGraph, circles, upwardImports } from '../../../scripts/import-graph.mjs';

type Graph = Map<string, string[]>;
const core = (p: string) => `packages/core/src/${p}`;
const graphOf = (edges: Array<[string, string]>): Graph => {
  const g: Graph = new Map();
  for (const [a, b] of edges) {
    g.set(a, [...(g.get(a) ?? []), b]);
    if (!g.has(b)) g.set(b, []);
  }
  return g;
};

describe('import graph check', () => {
  it('finds a circle, type-only or not, and a longer one', () => {
    const two = graphOf([
      [core('context.ts'), core('options.ts')],
      [core('options.ts'), core('context.ts')],
    ]);
    expect(circles(two)).toEqual([[core('context.ts'), core('options.ts')]]);
    const three = graphOf([
      [core('a/x.ts'), core('a/y.ts')],
      [core('a/y.ts'), core('a/z.ts')],
      [core('a/z.ts'), core('a/x.ts')],
      [core('a/z.ts'), core('a/w.ts')],
    ]);
    expect(circles(three)).toEqual([[core('a/x.ts'), core('a/y.ts'), core('a/z.ts')]]);
  });

  it('refuses an import from a lower layer to a higher one', () => {
    const g = graphOf([
      [core('ports/pending-login-store.ts'), core('context.ts')],
      [core('util/validated.ts'), core('http/handle.ts')],
      [core('tokens/access-token.ts'), core('http/types.ts')],
      [core('auth/account.ts'), core('mfa/summary.ts')],
      [core('inbox/api.ts'), core('auth/log.ts')],
      [core('mfa/login.ts'), core('auth/credentials-unchanged.ts')],
      [core('auth/login.ts'), core('context.ts')],
      ['packages/core/src/index.ts', 'packages/testkit/src/index.ts'],
      ['packages/client/src/index.ts', 'packages/core/src/index.ts'],
    ]);
    const problems: string[] = upwardImports(g);
    expect(problems).toHaveLength(7);
    expect(problems.join('\n')).toMatch(
      /pending-login-store\.ts \(ports\) -> .*context\.ts \(shared types\)/,
    );
    expect(problems.join('\n')).toMatch(/area auth may not import area mfa/);
    expect(problems.join('\n')).toMatch(/area inbox may not import area auth/);
    expect(problems.join('\n')).toMatch(/package core may not import package testkit/);
    expect(problems.join('\n')).toMatch(/package client may not import package core/);
  });

  it('the sources have no circles and no upward imports', () => {
    const g = buildGraph();
    expect(g.size).toBeGreaterThan(100);
    expect(circles(g)).toEqual([]);
    expect(upwardImports(g)).toEqual([]);
  });
});
