import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext } from '../harness.js';
import { expectJson } from '../session.js';
import { SoftAuthenticator } from '../soft-authenticator.js';
import {
  enrolPasskey,
  enrolTotp,
  me,
  ORIGIN,
  passkeyOptions,
  pendingLogin,
  type Session,
  type SharedMfa,
  signupAndLogin,
  verifyPasskey,
} from './helpers.js';

/** Passkeys (WebAuthn): registration, logins with an assertion, removal.
 *  Declared inside the `MFA` suite, on its instance. */
export function passkeyScenarios(mfa: SharedMfa): void {
  describe('WebAuthn passkeys', () => {
    let ctx: HttpContext;
    beforeAll(() => {
      ctx = mfa.ctx;
    });

    it('registration options pin the relying party, ask for no attestation and allow EdDSA, ES256 and RS256', async () => {
      const a = await signupAndLogin(ctx);
      const o = await expectJson<{
        challenge: string;
        rp: { id: string; name: string };
        attestation?: string;
        pubKeyCredParams: Array<{ alg: number }>;
      }>(await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }), 200);
      expect(o.rp).toEqual({ id: 'postern.test', name: 'Postern test' });
      expect(o.attestation ?? 'none').toBe('none');
      expect(o.pubKeyCredParams.map((p) => p.alg)).toEqual([-8, -7, -257]);
      expect(Buffer.from(o.challenge, 'base64url')).toHaveLength(32);
    });

    it('a passkey is registered, turns MFA on with recovery codes, and completes a login', async () => {
      const a = await signupAndLogin(ctx);
      const { auth, credentialId, recoveryCodes } = await enrolPasskey(ctx, a);
      expect(credentialId).toBe(auth.id);
      expect(recoveryCodes).toHaveLength(10);
      const p = await pendingLogin(ctx, a, true);
      expect(p.methods).toEqual(['webauthn', 'recovery']);
      const o = await passkeyOptions(ctx, p.mfaToken);
      expect(o.rpId).toBe('postern.test');
      expect(o.allowCredentials.map((c) => c.id)).toEqual([auth.id]);
      const s = await expectJson<Session>(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p.mfaToken, assertionResponse: auth.assert(o) },
        }),
        200,
      );
      expect(s.refreshToken).toEqual(expect.any(String));
      expect((await me(ctx, s.accessToken)).user.mfa).toEqual({ enabled: true, methods: ['webauthn'] });
    });

    it('a tampered assertion answers 401 invalid_code and the challenge is gone after it', async () => {
      const a = await signupAndLogin(ctx);
      const { auth } = await enrolPasskey(ctx, a);
      const p = await pendingLogin(ctx, a);
      const o = await passkeyOptions(ctx, p.mfaToken);
      const good = auth.assert(o);
      const sig = Buffer.from(good.response.signature, 'base64url');
      sig[sig.length - 1]! ^= 1;
      const tampered = { ...good, response: { ...good.response, signature: sig.toString('base64url') } };
      await expectProblem(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p.mfaToken, assertionResponse: tampered },
        }),
        401,
        'invalid_code',
      );
      // Single-use challenge: even the genuine assertion now needs fresh options.
      await expectProblem(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p.mfaToken, assertionResponse: good },
        }),
        401,
        'invalid_code',
      );
      const o2 = await passkeyOptions(ctx, p.mfaToken);
      await expectJson(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p.mfaToken, assertionResponse: auth.assert(o2) },
        }),
        200,
      );
    });

    it('a replayed assertion is refused on another pending login', async () => {
      const a = await signupAndLogin(ctx);
      const { auth } = await enrolPasskey(ctx, a);
      const p1 = await pendingLogin(ctx, a);
      const assertion = auth.assert(await passkeyOptions(ctx, p1.mfaToken));
      await expectJson(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p1.mfaToken, assertionResponse: assertion },
        }),
        200,
      );
      const p2 = await pendingLogin(ctx, a);
      await passkeyOptions(ctx, p2.mfaToken);
      await expectProblem(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p2.mfaToken, assertionResponse: assertion },
        }),
        401,
        'invalid_code',
      );
    });

    it('an assertion from another origin, or with a counter going backwards, is refused', async () => {
      const a = await signupAndLogin(ctx);
      const { auth } = await enrolPasskey(ctx, a);
      const p = await pendingLogin(ctx, a);
      await expectProblem(
        await verifyPasskey(ctx, p.mfaToken, auth, {
          origin: 'https://evil.test',
        }),
        401,
        'invalid_code',
      );
      await expectJson(await verifyPasskey(ctx, p.mfaToken, auth), 200);
      const p2 = await pendingLogin(ctx, a);
      await expectProblem(await verifyPasskey(ctx, p2.mfaToken, auth, { counter: 1 }), 401, 'invalid_code');
    });

    it('a credential of another user is refused', async () => {
      const a = await signupAndLogin(ctx);
      const b = await signupAndLogin(ctx);
      await enrolPasskey(ctx, a);
      const { auth: bKey } = await enrolPasskey(ctx, b);
      const p = await pendingLogin(ctx, a);
      await expectProblem(await verifyPasskey(ctx, p.mfaToken, bKey), 401, 'invalid_code');
    });

    it('an attestation whose public key is not a point of its curve is refused, and MFA stays off', async () => {
      const a = await signupAndLogin(ctx);
      const auth = new SoftAuthenticator(ORIGIN, { offCurve: true });
      const options = await expectJson<{ challenge: string; rp: { id: string }; user: { id: string } }>(
        await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }),
        200,
      );
      await expectProblem(
        await ctx.request('/auth/mfa/webauthn/register/verify', {
          json: { attestationResponse: auth.register(options) },
          bearer: a.access,
        }),
        401,
        'invalid_code',
      );
      expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: false, methods: [] });
    });

    it('an assertion whose user handle names another user is refused', async () => {
      const a = await signupAndLogin(ctx);
      const b = await signupAndLogin(ctx);
      const { auth } = await enrolPasskey(ctx, a);
      const bOptions = await expectJson<{ user: { id: string } }>(
        await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: b.access }),
        200,
      );
      const p = await pendingLogin(ctx, a);
      await expectProblem(
        await verifyPasskey(ctx, p.mfaToken, auth, {
          userHandle: bOptions.user.id,
        }),
        401,
        'invalid_code',
      );
      // The user's own handle (what the authenticator stored at registration) still works.
      await expectJson(await verifyPasskey(ctx, p.mfaToken, auth), 200);
    });

    it('an attestation without fresh registration options is refused', async () => {
      const a = await signupAndLogin(ctx);
      const auth = new SoftAuthenticator(ORIGIN);
      const options = await expectJson<{ challenge: string; rp: { id: string }; user: { id: string } }>(
        await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }),
        200,
      );
      const attestation = auth.register(options);
      await expectJson(
        await ctx.request('/auth/mfa/webauthn/register/verify', {
          json: { attestationResponse: attestation },
          bearer: a.access,
        }),
        200,
      );
      await expectProblem(
        await ctx.request('/auth/mfa/webauthn/register/verify', {
          json: { attestationResponse: attestation },
          bearer: a.access,
        }),
        401,
        'invalid_code',
      );
    });

    it('a user can hold several passkeys, list them, and delete one with the password', async () => {
      const a = await signupAndLogin(ctx);
      const first = await enrolPasskey(ctx, a);
      const second = await enrolPasskey(ctx, a);
      expect(second.recoveryCodes).toBeUndefined();
      const list = await expectJson<{ credentials: Array<{ id: string; name: string }> }>(
        await ctx.request('/auth/mfa/webauthn/credentials', { bearer: a.access }),
        200,
      );
      expect(list.credentials.map((c) => c.id)).toEqual([first.auth.id, second.auth.id]);
      const p = await pendingLogin(ctx, a);
      const o = await passkeyOptions(ctx, p.mfaToken);
      expect(o.allowCredentials.map((c) => c.id).sort()).toEqual([first.auth.id, second.auth.id].sort());
      await expectJson(
        await ctx.request('/auth/mfa/webauthn/verify', {
          json: { mfaToken: p.mfaToken, assertionResponse: second.auth.assert(o) },
        }),
        200,
      );
      const del = await ctx.request(`/auth/mfa/webauthn/credentials/${first.auth.id}`, {
        method: 'DELETE',
        json: { password: a.password },
        bearer: a.access,
      });
      expect(del.status).toBe(204);
      expect((await me(ctx, a.access)).user.mfa.methods).toEqual(['webauthn']);
      const res = await ctx.request('/auth/mfa/webauthn', {
        method: 'DELETE',
        json: { password: a.password },
        bearer: a.access,
      });
      expect(res.status).toBe(204);
      expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: false, methods: [] });
    });

    it('webauthn options for a user without passkeys answer 400', async () => {
      const a = await signupAndLogin(ctx);
      await enrolTotp(ctx, a);
      const p = await pendingLogin(ctx, a);
      await expectProblem(
        await ctx.request('/auth/mfa/webauthn/options', { json: { mfaToken: p.mfaToken } }),
        400,
        'validation_failed',
      );
    });
  });
}
