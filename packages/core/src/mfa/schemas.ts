import { z } from 'zod';
// The auth area's fields: a password counts 128 code points here as at signup.
import {
  codeField as code,
  displayNameField,
  passwordField as password,
  sessionAnswer,
  tokenField as token,
} from '../auth/schemas.js';

const b64url = z
  .string()
  .max(16_384)
  .regex(/^[A-Za-z0-9_-]*={0,2}$/, 'base64url expected');
const credentialId = b64url.min(1).max(1_366);
/** Client extension outputs: passed to the verifier as they are, never used as lookup keys.
 *  Open (authenticators add extensions over time) but capped: the known outputs (`credProps`,
 *  `prf`, `largeBlob`, `appid`) fit in a few hundred bytes. */
const EXTENSIONS_MAX = 4096;
const extensions = z
  .looseObject({})
  .refine((v) => {
    try {
      return Buffer.byteLength(JSON.stringify(v)) <= EXTENSIONS_MAX;
    } catch {
      return false; // a library caller's BigInt or cycle: no JSON, no extension output
    }
  }, `At most ${EXTENSIONS_MAX} bytes of extension outputs`)
  .default({});
const attachment = z.enum(['platform', 'cross-platform']).optional();

export const tokenCodeBody = z.strictObject({ token, code });
export const tokenBody = z.strictObject({ token });
export const verifyBody = z.strictObject({
  token,
  code,
  methodType: z.enum(['totp', 'email', 'recovery']).optional(),
});
export const mfaTokenBody = z.strictObject({ mfaToken: token });
export const mfaTokenCodeBody = z.strictObject({ mfaToken: token, code });

export const assertionResponse = z.strictObject({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  response: z.strictObject({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: b64url.nullish().transform((v) => v ?? undefined),
  }),
  clientExtensionResults: extensions,
  authenticatorAttachment: attachment,
});
export const webauthnVerifyBody = z.strictObject({ mfaToken: token, assertionResponse });

export const attestationResponse = z.strictObject({
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  response: z.strictObject({
    clientDataJSON: b64url,
    attestationObject: b64url,
    authenticatorData: b64url.optional(),
    transports: z.array(z.string().max(32)).max(10).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: b64url.optional(),
  }),
  clientExtensionResults: extensions,
  authenticatorAttachment: attachment,
});
export const registerVerifyBody = z.strictObject({
  attestationResponse,
  name: displayNameField(100).optional(),
  password: password.optional(),
});

export const enrolPasskeyBody = z.strictObject({
  mfaToken: token,
  attestationResponse,
  name: displayNameField(100).optional(),
});

/** Enrolment routes take no body, or `{ password }` instead of a recent login. Removal and new
 *  recovery codes take it too: there a missing password is 403 `reauth_required`, not a 400. */
export const optionalPasswordBody = z.strictObject({ password: password.optional() }).optional();
export const confirmBody = z.strictObject({ code, password: password.optional() });

/** The same session answer as the password login's. */
export const sessionSchema = sessionAnswer;
export const acceptedSchema = z.object({ accepted: z.literal(true) });
export const recoveryCodesSchema = z.object({ recoveryCodes: z.array(z.string()) });

// Answers, for the OpenAPI document.
export const totpSeedAnswer = z.strictObject({ secret: z.string(), otpauthUri: z.string() });
const credentialDescriptors = z
  .array(
    z.looseObject({
      id: z.string(),
      type: z.literal('public-key'),
      transports: z.array(z.string()).optional(),
    }),
  )
  .optional();
/** SimpleWebAuthn's options JSON: the fields a browser needs are named, the rest stays open
 *  (the library adds hints and extensions over time). */
export const requestOptionsAnswer = z.looseObject({
  challenge: z.string(),
  rpId: z.string().optional(),
  timeout: z.number().optional(),
  allowCredentials: credentialDescriptors,
  userVerification: z.string().optional(),
});
export const creationOptionsAnswer = z.looseObject({
  challenge: z.string(),
  rp: z.looseObject({ name: z.string(), id: z.string().optional() }),
  user: z.looseObject({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.looseObject({ alg: z.number(), type: z.literal('public-key') })),
  timeout: z.number().optional(),
  excludeCredentials: credentialDescriptors,
});
export const passkeysAnswer = z.strictObject({
  credentials: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      createdAt: z.iso.datetime(),
      lastUsedAt: z.iso.datetime().nullable(),
      deviceType: z.enum(['singleDevice', 'multiDevice']),
      backedUp: z.boolean(),
    }),
  ),
});
