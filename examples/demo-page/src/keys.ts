import { readFile } from 'node:fs/promises';
import { ConfigError, createKeyring, type KeyInput, silentLogger, systemClock } from '@postern/core';
import type { Env } from './config.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JWK or a JWK set (`{ "keys": [...] }`) as a list; the first key signs. */
function parseKeys(text: string, source: string): KeyInput[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the input, which is secret key material.
    throw new ConfigError(`${source} is not valid JSON; expected a JWK or a JWK set {"keys":[...]}`);
  }
  const list = isObject(json) && 'keys' in json ? json.keys : [json];
  if (!Array.isArray(list) || list.length === 0) {
    throw new ConfigError(`${source} must be a JWK or a JWK set {"keys":[...]} with at least one key`);
  }
  list.forEach((key, i) => {
    if (!isObject(key) || typeof key.kty !== 'string') {
      throw new ConfigError(`${source}: key ${i + 1} is not a JWK (no "kty")`);
    }
    if (key.kid !== undefined && (typeof key.kid !== 'string' || key.kid === '')) {
      throw new ConfigError(`${source}: key ${i + 1} has an empty or non-string "kid"`);
    }
  });
  return list as KeyInput[];
}

/** Loads the keys with the core's own keyring and signs and verifies one token, so a key the
 *  keyring would reject (or that cannot sign) stops start-up instead of the first login. */
async function checkKeys(keys: KeyInput[], source: string): Promise<void> {
  try {
    // Throws at once for a key of the wrong shape, type or size; signing finds the rest.
    const keyring = createKeyring({
      keys,
      issuer: 'urn:postern:key-check',
      logger: silentLogger,
      clock: systemClock,
    });
    const token = await keyring.sign({ aud: 'key-check' }, 'JWT', 60);
    await keyring.verify(token, { typ: 'JWT', audience: 'key-check', requiredClaims: [] });
  } catch (err) {
    throw new ConfigError(
      `${source}: unusable signing key: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** JWT signing keys from `JWT_PRIVATE_KEYS` (JSON) or the file named by `JWT_PRIVATE_KEYS_FILE`:
 *  a private JWK, or a JWK set whose first key signs and whose other keys (private or public)
 *  only verify, for rotation. Undefined when neither is set (the core then uses an ephemeral key). */
export async function readSigningKeys(env: Env): Promise<KeyInput[] | undefined> {
  const inline = env.JWT_PRIVATE_KEYS || undefined;
  const file = env.JWT_PRIVATE_KEYS_FILE || undefined;
  if (inline && file) throw new ConfigError('Set JWT_PRIVATE_KEYS or JWT_PRIVATE_KEYS_FILE, not both');
  if (inline === undefined && file === undefined) return undefined;
  let text = inline ?? '';
  const source = file ? `JWT_PRIVATE_KEYS_FILE (${file})` : 'JWT_PRIVATE_KEYS';
  if (file) {
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`${source} cannot be read: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
  }
  const keys = parseKeys(text, source);
  await checkKeys(keys, source);
  return keys;
}
