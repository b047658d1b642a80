#!/usr/bin/env node
// Counts the runtime values the built root of @postern/core exposes, through both its ESM and
// its CommonJS entry, and fails above the limit: the root is for host apps, everything else
// goes on a subpath (docs/decisions/0012-public-api.md). Run after `pnpm build`.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const MAX_ROOT_VALUES = 30;
const dist = new URL('../packages/core/dist/', import.meta.url);
const esm = new URL('index.js', dist);
const cjs = new URL('index.cjs', dist);
for (const entry of [esm, cjs]) {
  if (!existsSync(entry)) {
    console.error(`root-exports: ${fileURLToPath(entry)} is missing: run \`pnpm build\` first`);
    process.exit(1);
  }
}

// `default` and `module.exports` are what Node adds when ESM imports CommonJS, not exports.
const names = (mod) => Object.keys(mod).filter((k) => k !== 'default' && k !== 'module.exports');
const counted = {
  'index.js': names(await import(esm.href)),
  'index.cjs': names(createRequire(import.meta.url)(fileURLToPath(cjs))),
};

let failed = false;
for (const [file, keys] of Object.entries(counted)) {
  const over = keys.length > MAX_ROOT_VALUES;
  failed ||= over;
  console.log(`root-exports: ${file} has ${keys.length} runtime values (at most ${MAX_ROOT_VALUES})`);
  if (over) console.error(`  ${keys.sort().join(', ')}`);
}
const [a, b] = Object.values(counted);
const differ = a.filter((k) => !b.includes(k)).concat(b.filter((k) => !a.includes(k)));
if (differ.length > 0) {
  failed = true;
  console.error(`root-exports: ESM and CommonJS roots differ in ${differ.join(', ')}`);
}
process.exit(failed ? 1 : 0);
