// Email address rules are shared with the inbox; they live in util/.
export {
  canonicalEmail,
  EMAIL_PATTERN,
  isMailboxAddress,
  withinMailboxLimits,
} from '../util/email.js';
