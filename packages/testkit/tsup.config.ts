import { packageConfig } from '../../tsup.base.js';

// ESM only: the suites run under vitest, which cannot be loaded with require().
export default packageConfig({ index: 'src/index.ts', browser: 'src/browser.ts' }, { format: ['esm'] });
