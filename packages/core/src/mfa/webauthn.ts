import { createHash, randomBytes } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { User } from '../ports/user-store.js';
import type { StoredWebAuthnCredential } from '../ports/webauthn-credential-store.js';
import { logAuthEvent, type RequestMeta } from '../util/security-log.js';
import { addSeconds, type MfaEnv } from './env.js';
import { usablePublicKey } from './passkey-key.js';

/** COSE algorithms accepted: EdDSA, ES256, and RS256 last (kept for Windows Hello and older
 *  security keys; a documented exception). */
export const COSE_ALGORITHMS = [-8, -7, -257];
const CEREMONY_SECONDS = 300;

/** The verifier's reason without the values it quotes (challenges, origins from the client). */
function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message.replace(/"[^"]*"|'[^']*'/g, '…').slice(0, 200) : 'error';
}

/** Logs a refused ceremony (never the client's values); the caller answers with null. */
function rejected(
  env: MfaEnv,
  userId: string,
  reason: string,
  ceremony: 'attestation' | 'assertion',
  meta: RequestMeta,
): null {
  logAuthEvent(
    env.ctx.logger,
    'info',
    { event: 'webauthn_rejected', outcome: 'failure', reason, ceremony, userId },
    meta,
  );
  return null;
}

/** WebAuthn user handle: the user id's bytes (opaque, no personal data), hashed when long. */
function userHandle(userId: string): Uint8Array<ArrayBuffer> {
  const b = Buffer.from(userId, 'utf8');
  return Uint8Array.from(b.length <= 64 ? b : createHash('sha256').update(b).digest());
}

/** Creation options for a new credential; the challenge (32 random bytes) is stored bound to
 *  the user, single use. The user's existing credentials are excluded. */
export async function registrationOptions(
  env: MfaEnv,
  user: User,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpId, rpName } = env.cfg.webauthn;
  const existing = await env.ctx.stores.webauthnCredentials.listCredentials(user.id);
  const options = await generateRegistrationOptions({
    rpName,
    rpID: rpId,
    userName: user.email,
    userDisplayName: user.name,
    userID: userHandle(user.id),
    challenge: new Uint8Array(randomBytes(32)),
    timeout: CEREMONY_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    supportedAlgorithmIDs: COSE_ALGORITHMS,
  });
  const now = env.ctx.clock.now();
  await env.ctx.stores.webauthnChallenges.putChallenge({
    purpose: 'register',
    subject: user.id,
    userId: user.id,
    challenge: options.challenge,
    expiresAt: addSeconds(now, CEREMONY_SECONDS),
  });
  return options;
}

/** Checks an attestation against the user's stored challenge (taken, so single use either
 *  way). Returns the credential to store, or null when it does not verify. */
export async function verifyRegistration(
  env: MfaEnv,
  user: User,
  response: RegistrationResponseJSON,
  name: string,
  meta: RequestMeta,
): Promise<StoredWebAuthnCredential | null> {
  const now = env.ctx.clock.now();
  const ch = await env.ctx.stores.webauthnChallenges.takeChallenge('register', user.id, now);
  if (!ch) return null;
  const { rpId, origin } = env.cfg.webauthn;
  try {
    const r = await verifyRegistrationResponse({
      response,
      expectedChallenge: ch.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: false,
      supportedAlgorithmIDs: COSE_ALGORITHMS,
    });
    if (!r.verified) return null;
    const { credential, credentialDeviceType, credentialBackedUp } = r.registrationInfo;
    if (!usablePublicKey(credential.publicKey))
      return rejected(env, user.id, 'unusable_public_key', 'attestation', meta);
    return {
      id: credential.id,
      userId: user.id,
      publicKey: new Uint8Array(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
      deviceType: credentialDeviceType,
      backedUp: credentialBackedUp,
      createdAt: now,
      lastUsedAt: null,
    };
  } catch (e) {
    return rejected(env, user.id, reasonOf(e), 'attestation', meta);
  }
}

/** Request options for a pending login: allowCredentials = that user's credentials; the
 *  challenge is stored bound to the pending login's jti, single use. */
export async function authenticationOptions(
  env: MfaEnv,
  userId: string,
  jti: string,
  pendingExpiresAt: Date,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const creds = await env.ctx.stores.webauthnCredentials.listCredentials(userId);
  const options = await generateAuthenticationOptions({
    rpID: env.cfg.webauthn.rpId,
    allowCredentials: creds.map((c) => ({ id: c.id, transports: c.transports })),
    challenge: new Uint8Array(randomBytes(32)),
    timeout: CEREMONY_SECONDS * 1000,
    userVerification: 'preferred',
  });
  const now = env.ctx.clock.now();
  const expires = addSeconds(now, CEREMONY_SECONDS);
  await env.ctx.stores.webauthnChallenges.putChallenge({
    purpose: 'authenticate',
    subject: jti,
    userId,
    challenge: options.challenge,
    expiresAt: expires < pendingExpiresAt ? expires : pendingExpiresAt,
  });
  return options;
}

/** Checks an assertion for a pending login: the challenge is taken (single use), the
 *  credential must be the user's, the signature and origin must verify, and the counter must
 *  move forward (stored with a compare-and-set). Returns whether the user was verified
 *  (PIN or biometric), or null on any failure. */
export async function verifyAuthentication(
  env: MfaEnv,
  userId: string,
  jti: string,
  response: AuthenticationResponseJSON,
  meta: RequestMeta,
): Promise<{ userVerified: boolean } | null> {
  const { webauthnChallenges, webauthnCredentials } = env.ctx.stores;
  const now = env.ctx.clock.now();
  const ch = await webauthnChallenges.takeChallenge('authenticate', jti, now);
  if (!ch || ch.userId !== userId) return null;
  const cred = await webauthnCredentials.getCredential(response.id);
  if (!cred || cred.userId !== userId) return null;
  // A user handle, when the authenticator sends one, must name the same user (WebAuthn 7.2).
  // Compared as bytes, so padding or the URL-unsafe alphabet do not matter.
  const handle = response.response.userHandle;
  if (handle && !Buffer.from(handle, 'base64url').equals(userHandle(userId)))
    return rejected(env, userId, 'user_handle_mismatch', 'assertion', meta);
  const { rpId, origin } = env.cfg.webauthn;
  try {
    const r = await verifyAuthenticationResponse({
      response,
      expectedChallenge: ch.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      credential: {
        id: cred.id,
        publicKey: new Uint8Array(cred.publicKey),
        counter: cred.counter,
        transports: cred.transports as never,
      },
      requireUserVerification: false,
    });
    if (!r.verified) return null;
    const ok = await webauthnCredentials.updateCounter(
      cred.id,
      cred.counter,
      r.authenticationInfo.newCounter,
      now,
    );
    return ok ? { userVerified: r.authenticationInfo.userVerified } : null;
  } catch (e) {
    return rejected(env, userId, reasonOf(e), 'assertion', meta);
  }
}
