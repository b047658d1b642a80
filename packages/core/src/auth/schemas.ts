import { z } from 'zod';
import { DISPLAY_NAME_MESSAGE, isDisplayName } from '../util/text.js';
import { canonicalEmail, EMAIL_PATTERN, withinMailboxLimits } from './email.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';

/** Email as typed, made canonical (trim, NFC, lower case), then validated. */
export const emailField = z
  .string()
  .max(254)
  .meta({ format: 'idn-email' })
  .overwrite(canonicalEmail)
  // `abort`: an address the pattern refuses is named once, not again by the refinement.
  .pipe(
    z.email({ pattern: EMAIL_PATTERN, abort: true }).refine(withinMailboxLimits, 'Invalid email address'),
  );

/** A password exactly as sent (never trimmed), up to 128 characters. zod 4 and JSON Schema both
 *  count code points, as the strength policy does, so an emoji password of 128 fits. */
export const passwordField = z
  .string()
  .min(1)
  .max(PASSWORD_MAX, `At most ${PASSWORD_MAX} characters`)
  // A lone surrogate (a JSON escape such as \ud800) has no UTF-8 form: the hasher would take
  // it as U+FFFD, and two different passwords would be one.
  .refine((p) => p.isWellFormed(), 'Not valid Unicode text');

/** A password being set: also at least 8 characters, checked with the rest of the body (400
 *  before any code or current password is looked at). The strength policy runs in the flow,
 *  which knows the user's name and email. */
const newPasswordField = passwordField.min(PASSWORD_MIN, `Use at least ${PASSWORD_MIN} characters`);

/** A person's name or a name they give something: trimmed, visible, no control characters. */
export const displayNameField = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { abort: true })
    .max(max, { abort: true })
    .refine(isDisplayName, DISPLAY_NAME_MESSAGE);
const nameField = displayNameField(200);
export const tokenField = z.string().min(1).max(4096);
export const codeField = z.string().min(1).max(64);

export const loginBody = z.strictObject({
  email: emailField,
  password: passwordField,
  /** `true`: a refresh token in the answer; `'cookie'`: in an HttpOnly cookie (browser sessions). */
  refreshToken: z.union([z.boolean(), z.literal('cookie')]).optional(),
});
export const refreshBody = z.strictObject({ refreshToken: tokenField });
/** Over HTTP the token may come from the refresh cookie instead: then the body is `{}`. */
export const refreshRequestBody = z.strictObject({ refreshToken: tokenField.optional() });
export const signupBody = z.strictObject({ name: nameField, email: emailField, password: newPasswordField });
export const logoutBody = z.strictObject({ refreshToken: tokenField });
export const logoutRequestBody = refreshRequestBody;
export const forgotBody = z.strictObject({ email: emailField });
export const forgotResetBody = z.strictObject({ code: codeField, password: newPasswordField });
export const changePasswordBody = z.strictObject({
  currentPassword: passwordField,
  newPassword: newPasswordField,
  /** Default false: every other session ends. */
  keepOtherSessions: z.boolean().optional(),
});
/** A route that takes no input: no body, or an empty object (nothing unknown slips through). */
export const emptyBody = z.strictObject({}).optional();
export const verifyEmailBody = z.strictObject({ code: codeField });
/** `password` is checked by the flow: a missing one is 403 `reauth_required`, not a field error. */
export const changeEmailBody = z.strictObject({ newEmail: emailField, password: passwordField.optional() });
export const confirmEmailChangeBody = z.strictObject({ newEmail: emailField, code: codeField });
/** Body of session revocations: optional, `password` stands in for a recent login. */
export const reauthBody = z.strictObject({ password: passwordField.optional() }).optional();

// --- answers (OpenAPI) ---

export const sessionAnswer = z.object({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int(),
  /** Absent for a browser session (`refreshToken: 'cookie'`): it is in the refresh cookie. */
  refreshToken: z.string().optional().meta({
    description: "Only when the login asked for one; a browser session's is in `Set-Cookie` instead",
  }),
});
export const mfaRequiredAnswer = z.object({
  mfaRequired: z.literal(true),
  mfaToken: z.string(),
  methods: z.array(z.enum(['totp', 'email', 'webauthn', 'recovery'])),
  /** `mfa.required` and no method yet: the methods to enrol now (`/auth/mfa/enrol/*`). */
  enrol: z.array(z.enum(['totp', 'email', 'webauthn'])).optional(),
});
export const meAnswer = z.object({
  user: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    roles: z.array(z.string()),
    emailVerified: z.boolean(),
    mfa: z.object({ enabled: z.boolean(), methods: z.array(z.enum(['totp', 'email', 'webauthn'])) }),
  }),
});
export const rolesAnswer = z.object({ roles: z.array(z.string()) });
export const signupAnswer = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
});
export const acceptedAnswer = z.object({ accepted: z.literal(true) });
export const sessionsAnswer = z.object({
  sessions: z.array(
    z.object({
      id: z.string(),
      current: z.boolean(),
      createdAt: z.string(),
      lastUsedAt: z.string(),
      expiresAt: z.string(),
      authTime: z.string(),
      amr: z.array(z.string()),
      ip: z.string(),
      userAgent: z.string().nullable(),
    }),
  ),
});
export const jwksAnswer = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });
