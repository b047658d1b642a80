import { packageConfig } from '../../tsup.base.js';

export default packageConfig(
  {
    index: 'src/index.ts',
    'ports/index': 'src/ports/index.ts',
    'webhook/index': 'src/webhook/public.ts',
    internal: 'src/internal.ts',
    'memory/index': 'src/memory/index.ts',
    'mailers/index': 'src/mailers/index.ts',
  },
  // import.meta.url in the CJS build: the HTML-to-text worker resolves html-to-text with it.
  { shims: true },
);
