import { createHmac, randomBytes } from 'node:crypto';
import { createPostern, type Mail, type Postern, silentLogger } from '@postern/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// The first factor and its recovery codes commit together: when storing the codes fails, the
// factor is not on (MFA never turns on without codes), and the confirmation can be repeated.
const server = await serverUrl();
const PASSWORD = 'correct-horse-battery-staple-42';

/** RFC 6238 (SHA-1, 30 s, six digits) of a base32 seed, now. */
function totp(base32: string): string {
  let bits = '';
  for (const c of base32.replace(/=+$/, ''))
    bits += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(c).toString(2).padStart(5, '0');
  const seed = Buffer.from(bits.match(/.{8}/g)!.map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000)));
  const mac = createHmac('sha1', seed).update(counter).digest();
  const at = mac[19]! & 0xf;
  return String((mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

let db: TestDatabase;
let ph: Postern;
const mails: Mail[] = [];

describe.skipIf(!server)(
  `the first MFA factor and its recovery codes${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
  () => {
    beforeAll(async () => {
      db = await openTestDatabase('first_factor', { max: 4 });
      ph = createPostern({
        issuer: 'https://postern.test',
        audience: 'first-factor',
        stores: postgresStores({ pool: db.pool, schema: db.schema, listen: false }),
        mailer: { send: async (m) => void mails.push(m) },
        logger: silentLogger,
        mfa: { encryptionKey: randomBytes(32) },
      });
    });
    afterAll(async () => {
      await ph?.close();
      await db?.close();
    });

    /** Makes every insert of recovery codes fail while `fn` runs. */
    async function codesFail<T>(fn: () => Promise<T>): Promise<T> {
      const table = `"${db.schema}".mfa_recovery_codes`;
      await db.pool.query(`
        CREATE OR REPLACE FUNCTION "${db.schema}".refuse_codes() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION 'recovery codes refused by the test'; END $$ LANGUAGE plpgsql`);
      await db.pool.query(
        `CREATE TRIGGER refuse_codes BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION "${db.schema}".refuse_codes()`,
      );
      try {
        return await fn();
      } finally {
        await db.pool.query(`DROP TRIGGER refuse_codes ON ${table}`);
      }
    }

    async function signedIn() {
      const email = `first-${randomBytes(4).toString('hex')}@example.test`;
      const { user } = await ph.auth.signup({ name: 'First', email, password: PASSWORD });
      const s = await ph.auth.login({ email, password: PASSWORD });
      if (!('accessToken' in s)) throw new Error('expected a session');
      return { email, id: user.id, principal: await ph.auth.verifyAccessToken(s.accessToken) };
    }

    const stores = () => postgresStores({ pool: db.pool, schema: db.schema, listen: false });

    it('TOTP: no factor without its codes; the same code confirms once the codes can be stored', async () => {
      const u = await signedIn();
      const { secret } = await ph.mfa.totpSetup(u.principal);
      const code = totp(secret);
      await expect(codesFail(() => ph.mfa.totpConfirm(u.principal, { code }))).rejects.toThrow();
      expect(await stores().mfaFactors.listFactors(u.id)).toEqual([]);
      const { recoveryCodes } = await ph.mfa.totpConfirm(u.principal, { code });
      expect(recoveryCodes).toHaveLength(10);
      expect(await stores().mfaFactors.listFactors(u.id)).toMatchObject([{ type: 'totp' }]);
      expect(await stores().recoveryCodes.listUnused(u.id)).toHaveLength(10);
    });

    it('email: no factor without its codes, and the mailed code stays usable', async () => {
      const u = await signedIn();
      await ph.mfa.emailSetup(u.principal);
      while (!mails.some((m) => m.to === u.email)) await new Promise((r) => setTimeout(r, 5));
      const code = /\d{6}/.exec(mails.find((m) => m.to === u.email)!.text)![0];
      await expect(codesFail(() => ph.mfa.emailConfirm(u.principal, { code }))).rejects.toThrow();
      expect(await stores().mfaFactors.listFactors(u.id)).toEqual([]);
      const { recoveryCodes } = await ph.mfa.emailConfirm(u.principal, { code });
      expect(recoveryCodes).toHaveLength(10);
      expect(await stores().mfaFactors.listFactors(u.id)).toMatchObject([{ type: 'email' }]);
    });
  },
);
