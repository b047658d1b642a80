import type {
  StoredWebAuthnCredential,
  WebAuthnChallenge,
  WebAuthnChallengeStore,
  WebAuthnCredentialStore,
} from '@postern/core/ports';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';
import { bytes } from '../sql.js';

interface CredentialRow {
  id: string;
  user_id: string;
  public_key: Uint8Array;
  counter: string;
  transports: string[];
  name: string;
  device_type: StoredWebAuthnCredential['deviceType'];
  backed_up: boolean;
  created_at: Date;
  last_used_at: Date | null;
}

const toCredential = (r: CredentialRow): StoredWebAuthnCredential => ({
  id: r.id,
  userId: r.user_id,
  publicKey: bytes(r.public_key),
  counter: Number(r.counter),
  transports: r.transports,
  name: r.name,
  deviceType: r.device_type,
  backedUp: r.backed_up,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

/** Credentials: the counter moves by compare-and-set in one UPDATE. */
export function postgresWebAuthnCredentialStore({ db, t }: StoreDeps): WebAuthnCredentialStore {
  const T = t('webauthn_credentials');
  return {
    async addCredential(c) {
      const r = await db.query(
        `INSERT INTO ${T} (id, user_id, public_key, counter, transports, name, device_type, backed_up, created_at, last_used_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
        [
          c.id,
          c.userId,
          Buffer.from(c.publicKey),
          c.counter,
          c.transports,
          c.name,
          c.deviceType,
          c.backedUp,
          c.createdAt,
          c.lastUsedAt,
        ],
      );
      return affected(r) === 1;
    },
    async getCredential(id) {
      const r = await db.query(`SELECT * FROM ${T} WHERE id = $1`, [id]);
      return r.rows[0] ? toCredential(r.rows[0]) : null;
    },
    async listCredentials(userId) {
      const r = await db.query(`SELECT * FROM ${T} WHERE user_id = $1 ORDER BY created_at, seq`, [userId]);
      return r.rows.map(toCredential);
    },
    async updateCounter(id, expected, next, usedAt) {
      const r = await db.query(
        `UPDATE ${T} SET counter = $3, last_used_at = $4 WHERE id = $1 AND counter = $2`,
        [id, expected, next, usedAt],
      );
      return affected(r) === 1;
    },
    async removeCredential(userId, id) {
      return affected(await db.query(`DELETE FROM ${T} WHERE id = $1 AND user_id = $2`, [id, userId])) === 1;
    },
    async removeAllCredentials(userId) {
      return affected(await db.query(`DELETE FROM ${T} WHERE user_id = $1`, [userId]));
    },
  };
}

/** Challenges: one per (purpose, subject) by primary key; taking one is `DELETE ... RETURNING`,
 *  single use whatever the ceremony's outcome (an expired one is deleted and refused). */
export function postgresWebAuthnChallengeStore({ db, t }: StoreDeps): WebAuthnChallengeStore {
  const T = t('webauthn_challenges');
  return {
    async putChallenge(ch) {
      await db.query(
        `INSERT INTO ${T} (purpose, subject, user_id, challenge, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (purpose, subject) DO UPDATE
           SET user_id = EXCLUDED.user_id, challenge = EXCLUDED.challenge, expires_at = EXCLUDED.expires_at`,
        [ch.purpose, ch.subject, ch.userId, ch.challenge, ch.expiresAt],
      );
    },
    async takeChallenge(purpose, subject, now) {
      const r = await db.query(`DELETE FROM ${T} WHERE purpose = $1 AND subject = $2 RETURNING *`, [
        purpose,
        subject,
      ]);
      const row = r.rows[0] as
        | {
            purpose: WebAuthnChallenge['purpose'];
            subject: string;
            user_id: string;
            challenge: string;
            expires_at: Date;
          }
        | undefined;
      if (!row || row.expires_at.getTime() <= now.getTime()) return null;
      return {
        purpose: row.purpose,
        subject: row.subject,
        userId: row.user_id,
        challenge: row.challenge,
        expiresAt: row.expires_at,
      };
    },
  };
}
