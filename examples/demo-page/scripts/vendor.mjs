// Copies the browser libraries the demo page uses into public/vendor/ (served from this
// origin: no CDN, and the page's CSP allows scripts from 'self' only), and bundles
// @postern/client there as ES modules: index.js, and the passkey helpers it imports on first
// use as a chunk of their own. Run after changing or upgrading them:
// `pnpm --dir examples/demo-page vendor`; `--check` only says whether the copy is current.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const out = fileURLToPath(new URL('../public/vendor/', import.meta.url));
const check = process.argv.includes('--check');

const clientRoot = dirname(require.resolve('@postern/client/package.json'));
const webauthnRoot = join(
  dirname(createRequire(join(clientRoot, 'package.json')).resolve('@simplewebauthn/browser')),
  '..',
);
const uqrRoot = join(dirname(require.resolve('uqr')), '..');

/** Every vendored file: name under public/vendor/ -> contents. */
const files = new Map([
  ['simplewebauthn-browser.LICENSE.md', readFileSync(join(webauthnRoot, 'LICENSE.md'))],
  ['uqr.js', readFileSync(join(uqrRoot, 'dist/index.mjs'))],
  ['uqr.LICENSE', readFileSync(join(uqrRoot, 'LICENSE'))],
  ['postern-client/LICENSE', readFileSync(join(clientRoot, 'LICENSE'))],
]);
const bundle = await build({
  entryPoints: { index: join(clientRoot, 'src/index.ts') },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  outdir: join(out, 'postern-client'),
  chunkNames: 'chunk-[hash]',
  // Chunk hashes cover the paths esbuild sees relative to its working directory: one fixed
  // directory makes the bundle the same whether this runs from the package or the repo root.
  absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
  write: false,
  logLevel: 'warning',
});
for (const f of bundle.outputFiles) files.set(f.path.slice(out.length), Buffer.from(f.contents));

const current = readdirSync(out, { recursive: true, withFileTypes: true })
  .filter((d) => d.isFile())
  .map((d) => join(d.parentPath, d.name).slice(out.length));

if (check) {
  const stale = [...files].filter(([name, body]) => {
    try {
      return !readFileSync(join(out, name)).equals(body);
    } catch {
      return true;
    }
  });
  const extra = current.filter((name) => !files.has(name));
  if (stale.length || extra.length) {
    console.error(`public/vendor is stale: ${[...stale.map(([n]) => n), ...extra].join(', ')}`);
    process.exit(1);
  }
} else {
  for (const name of current) if (!files.has(name)) rmSync(join(out, name));
  for (const [name, body] of files) {
    mkdirSync(dirname(join(out, name)), { recursive: true });
    writeFileSync(join(out, name), body);
  }
}
