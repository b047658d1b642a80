// What a page downloads: the browser bundle without passkeys stays under 8 KB min+gzip, and the
// passkey library is a separate import fetched on the first passkey call.

import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { answerTypesText, TYPES_FILE } from '../scripts/answer-types.js';

const LIMIT = 8 * 1024;

it('bundles for browsers in under 8 KB min+gzip, @simplewebauthn/browser left to a dynamic import', async () => {
  const out = await build({
    entryPoints: [new URL('../src/index.ts', import.meta.url).pathname],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external: ['@simplewebauthn/browser'],
    write: false,
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.contents;
  const gzipped = gzipSync(code, { level: 9 }).length;
  expect(gzipped).toBeLessThan(LIMIT);
  const text = Buffer.from(code).toString();
  expect(text).toMatch(/import\("@simplewebauthn\/browser"\)/);
  expect(text).not.toMatch(/^import .*simplewebauthn/m);
  expect(text).not.toMatch(/zod|@postern\/core/);
});

it('types its answers from the OpenAPI document the server serves (pnpm client-types)', async () => {
  expect(await readFile(TYPES_FILE, 'utf8')).toBe(await answerTypesText());
});
