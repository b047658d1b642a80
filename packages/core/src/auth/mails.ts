import type { Mail } from '../ports/mailer.js';

/** The reset mail holds only the code (never a link with it: tokens stay out of URLs). */
export function resetCodeMail(to: string, code: string, ttlMinutes: number): Mail {
  return {
    to,
    subject: 'Your password reset code',
    text: [
      'Someone asked to reset the password of this account.',
      '',
      `Reset code: ${code}`,
      '',
      `The code works once and expires in ${ttlMinutes} minutes.`,
      'If you did not ask for it, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}

/** The verification mail: the code only (entered where the user is signed in). */
export function verificationCodeMail(to: string, code: string, ttlMinutes: number): Mail {
  return {
    to,
    subject: 'Confirm your email address',
    text: [
      `Your confirmation code is ${code}`,
      '',
      `It expires in ${ttlMinutes} minutes and works once.`,
      'If you did not create an account with this address, ignore this mail.',
    ].join('\n'),
  };
}

/** To the new address of an email change: the code only. */
export function emailChangeCodeMail(to: string, code: string, ttlMinutes: number): Mail {
  return {
    to,
    subject: 'Confirm your new email address',
    text: [
      `Your confirmation code is ${code}`,
      '',
      `Entering it makes this the sign-in address of your account. It expires in ${ttlMinutes} minutes and works once.`,
      'If you did not ask for this, ignore this mail.',
    ].join('\n'),
  };
}

/** To the old address once a change is done; the new address is not named (it is private). */
export function emailChangedMail(to: string, at: Date): Mail {
  return {
    to,
    subject: 'Your email address was changed',
    text: [
      `The sign-in address of your account was changed at ${at.toISOString()}; mail for it now goes to the new address.`,
      '',
      'If this was not you, someone who knows your password did it: contact the service now.',
    ].join('\n'),
  };
}

export function passwordChangedMail(to: string, at: Date, how: 'reset' | 'change', othersEnded = true): Mail {
  return {
    to,
    subject: 'Your password was changed',
    text: [
      `The password of this account was ${how === 'reset' ? 'reset with an emailed code' : 'changed'} at ${at.toISOString()}.`,
      how === 'reset'
        ? 'Every session was signed out.'
        : othersEnded
          ? 'Your other sessions were signed out.'
          : 'Your other sessions stay signed in.',
      '',
      'If this was not you, reset your password now and review your sign-in methods.',
    ].join('\n'),
  };
}

/** To the owner when a step of a sign-in succeeded after several failures since the last
 *  success: someone may have guessed the password (or be trying codes). No codes, no links. */
export function failedAttemptsMail(
  to: string,
  failures: number,
  at: Date,
  step: 'password' | 'mfa' | 'signin',
): Mail {
  const what = {
    password: 'Your password was entered correctly',
    mfa: 'The second sign-in step of your account was passed',
    signin: 'Someone signed in to your account',
  }[step];
  return {
    to,
    subject: 'A sign-in to your account followed failed attempts',
    text: [
      `${what} at ${at.toISOString()}, after ${failures} failed attempts since the last successful one.`,
      step === 'password' ? 'The second sign-in step is still needed before a session is opened.' : '',
      '',
      'If this was you, nothing needs doing.',
      'If not, reset your password now and review your sign-in methods and sessions.',
    ]
      .filter((line, i) => i !== 1 || line !== '')
      .join('\n'),
  };
}
