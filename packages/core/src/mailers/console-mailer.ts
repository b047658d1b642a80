import type { Mail, Mailer } from '../ports/mailer.js';

/** Prints each mail to a stream (stdout by default): for demos and local development,
 *  where reading the code from the terminal is the point. Never for production. */
export function consoleMailer(write: (s: string) => void = (s) => process.stdout.write(s)): Mailer {
  return {
    async send(mail: Mail) {
      write(`\n--- mail to ${mail.to} ---\nSubject: ${mail.subject}\n\n${mail.text}\n--- end of mail ---\n`);
    },
  };
}
