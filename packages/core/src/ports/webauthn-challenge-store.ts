/** A WebAuthn challenge waiting for its ceremony's answer. */
export interface WebAuthnChallenge {
  /** 'register' is bound to a user, 'authenticate' to a pending login. */
  purpose: 'register' | 'authenticate';
  /** userId ('register') or pending login jti ('authenticate'). */
  subject: string;
  userId: string;
  /** base64url of 32 random bytes. */
  challenge: string;
  expiresAt: Date;
}

/** Server-side WebAuthn challenges: one live challenge per (purpose, subject). */
export interface WebAuthnChallengeStore {
  /** Stores the challenge, replacing any earlier one for the same (purpose, subject). */
  putChallenge(challenge: WebAuthnChallenge): Promise<void>;
  /** Atomically deletes and returns the challenge: single use whatever the ceremony's outcome.
   *  Concurrent callers: exactly one gets it. Null when absent or expired at `now`. */
  takeChallenge(
    purpose: WebAuthnChallenge['purpose'],
    subject: string,
    now: Date,
  ): Promise<WebAuthnChallenge | null>;
}
