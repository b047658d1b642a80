import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const script = fileURLToPath(new URL('../scripts/vendor.mjs', import.meta.url));

it('serves the current @postern/client bundle and library copies (pnpm --dir examples/demo-page vendor)', () => {
  expect(() => execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' })).not.toThrow();
});
