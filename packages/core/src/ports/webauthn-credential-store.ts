/** A registered WebAuthn credential (passkey or security key). */
export interface StoredWebAuthnCredential {
  /** base64url credential id, globally unique. */
  id: string;
  userId: string;
  /** COSE public key. */
  publicKey: Uint8Array;
  /** Signature counter last seen (0 = the authenticator does not count). */
  counter: number;
  transports: string[];
  /** Label the user gave it. */
  name: string;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** WebAuthn credentials, several per user. */
export interface WebAuthnCredentialStore {
  /** Adds the credential; false (nothing stored) when its id is already registered. */
  addCredential(credential: StoredWebAuthnCredential): Promise<boolean>;
  getCredential(id: string): Promise<StoredWebAuthnCredential | null>;
  /** The user's credentials, oldest first. */
  listCredentials(userId: string): Promise<StoredWebAuthnCredential[]>;
  /** Atomic compare-and-set of the counter: updates only when the stored counter still equals
   *  `expected`. Concurrent callers with the same `expected`: exactly one gets `true`. */
  updateCounter(id: string, expected: number, next: number, usedAt: Date): Promise<boolean>;
  /** Removes one credential of that user; true when it was theirs and existed. */
  removeCredential(userId: string, id: string): Promise<boolean>;
  /** Removes every credential of the user; returns how many. */
  removeAllCredentials(userId: string): Promise<number>;
}
