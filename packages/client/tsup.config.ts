import { packageConfig } from '../../tsup.base.js';

// ESM only, for browsers and Node: `@simplewebauthn/browser` stays a separate import, loaded
// on the first passkey call.
export default packageConfig(
  { index: 'src/index.ts', react: 'src/react.ts' },
  { format: ['esm'], target: 'es2022' },
);
