import { z } from 'zod';
import { canonicalEmail, EMAIL_PATTERN, withinMailboxLimits } from './email.js';
import { DISPLAY_NAME_MESSAGE, isDisplayName } from './text.js';

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

/** A person's name or a name they give something: trimmed, visible, no control characters. */
export const displayNameField = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { abort: true })
    .max(max, { abort: true })
    .refine(isDisplayName, DISPLAY_NAME_MESSAGE);
