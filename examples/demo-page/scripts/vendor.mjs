// Copies the browser libraries the demo page uses into public/vendor/ (served from this
// origin: no CDN, and the page's CSP allows scripts from 'self' only). Run after upgrading
// them: `pnpm --dir examples/demo-page vendor`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const out = fileURLToPath(new URL('../public/vendor/', import.meta.url));
mkdirSync(out, { recursive: true });

const webauthnRoot = join(dirname(require.resolve('@simplewebauthn/browser')), '..');
copyFileSync(
  join(webauthnRoot, 'dist/bundle/index.umd.min.js'),
  join(out, 'simplewebauthn-browser.umd.min.js'),
);
copyFileSync(join(webauthnRoot, 'LICENSE.md'), join(out, 'simplewebauthn-browser.LICENSE.md'));

const uqrRoot = join(dirname(require.resolve('uqr')), '..');
copyFileSync(join(uqrRoot, 'dist/index.mjs'), join(out, 'uqr.js'));
copyFileSync(join(uqrRoot, 'LICENSE'), join(out, 'uqr.LICENSE'));
