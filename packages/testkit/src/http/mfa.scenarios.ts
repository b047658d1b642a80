import { afterAll, beforeAll, describe } from 'vitest';
import type { HttpEnv } from './harness.js';
import { browserSessionScenarios } from './mfa/browser-session.scenarios.js';
import { emailCodeScenarios } from './mfa/email-code.scenarios.js';
import { emailMethodOffScenarios } from './mfa/email-off.scenarios.js';
import { MFA_OPTIONS, type SharedMfa } from './mfa/helpers.js';
import { passkeyScenarios } from './mfa/passkey.scenarios.js';
import { pendingLoginScenarios } from './mfa/pending-login.scenarios.js';
import { recoveryCodeScenarios } from './mfa/recovery.scenarios.js';
import { mfaRequiredScenarios } from './mfa/required.scenarios.js';
import { totpScenarios } from './mfa/totp.scenarios.js';

/** MFA login routes and the enrolment table; pending tokens and codes. One file per factor
 *  under `mfa/`; the factor suites share one instance, as a host's users share one. */
export function mfaScenarios(env: HttpEnv): void {
  emailMethodOffScenarios(env);
  mfaRequiredScenarios(env);

  describe('MFA', () => {
    const mfa = {} as SharedMfa;
    beforeAll(async () => {
      mfa.ctx = await env.setup(MFA_OPTIONS);
    });
    afterAll(() => mfa.ctx?.close());

    totpScenarios(mfa);
    pendingLoginScenarios(mfa);
    recoveryCodeScenarios(mfa);
    emailCodeScenarios(mfa);
    passkeyScenarios(mfa);
  });

  browserSessionScenarios(env);
}
