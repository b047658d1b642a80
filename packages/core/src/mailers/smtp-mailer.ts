import nodemailer from 'nodemailer';
import type { Mail, Mailer } from '../ports/mailer.js';

export interface SmtpMailerOptions {
  /** e.g. `smtp://user:pass@host:587` or `smtps://...` */
  url: string;
  /** Default From header. */
  from: string;
}

/** Sends mail over SMTP with nodemailer (pooled connection). */
export function smtpMailer(opts: SmtpMailerOptions): Mailer & { close(): void } {
  const transport = nodemailer.createTransport(opts.url);
  return {
    async send(mail: Mail) {
      await transport.sendMail({
        from: mail.from ?? opts.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers: mail.headers,
        messageId: mail.headers?.['Message-ID'],
      });
    },
    close: () => transport.close(),
  };
}
