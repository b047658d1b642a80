import nodemailer from 'nodemailer';
import { ConfigError } from '../errors.js';
import type { Mail, Mailer } from '../ports/mailer.js';

export interface SmtpMailerOptions {
  /** e.g. `smtp://user:pass@host:587` or `smtps://...` */
  url: string;
  /** Default From header. */
  from: string;
}

/** nodemailer's error without its text: an SMTP reply quotes the recipient (`550 <bob@x>
 *  unknown`), and the flows log what a mailer throws. The codes say what went wrong. */
function smtpFailure(e: unknown): Error {
  const { code, responseCode, command } = (e ?? {}) as {
    code?: unknown;
    responseCode?: unknown;
    command?: unknown;
  };
  const parts = [code, command, responseCode].filter((p) => typeof p === 'string' || typeof p === 'number');
  return Object.assign(new Error(`SMTP send failed${parts.length ? ` (${parts.join(' ')})` : ''}`), {
    code,
    responseCode,
  });
}

/** nodemailer takes any string and fails later with a TypeError of its own: refuse a URL it
 *  cannot use at once, without echoing it (it may hold the SMTP password). */
function smtpUrl(raw: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {}
  if (url === null || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '')
    throw new ConfigError('smtpMailer: url must look like smtp://host:port or smtps://user:pass@host:port');
  return raw;
}

/** Sends mail over SMTP with nodemailer. */
export function smtpMailer(opts: SmtpMailerOptions): Mailer & { close(): void } {
  const transport = nodemailer.createTransport(smtpUrl(opts.url));
  return {
    async send(mail: Mail) {
      try {
        await transport.sendMail({
          from: mail.from ?? opts.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          headers: mail.headers,
          messageId: mail.headers?.['Message-ID'],
        });
      } catch (e) {
        throw smtpFailure(e);
      }
    },
    close: () => transport.close(),
  };
}
