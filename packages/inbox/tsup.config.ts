import { packageConfig } from '../../tsup.base.js';

export default packageConfig(
  { index: 'src/index.ts' },
  // import.meta.url in the CJS build: the HTML-to-text worker resolves html-to-text with it.
  { shims: true },
);
