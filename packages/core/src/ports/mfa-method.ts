/** A second factor a user can confirm and log in with. */
export type MfaMethod = 'totp' | 'email' | 'webauthn';
