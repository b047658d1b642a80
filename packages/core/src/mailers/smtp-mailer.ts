import nodemailer from 'nodemailer';
import { ConfigError } from '../errors.js';
import type { Mail, Mailer } from '../ports/mailer.js';
import { integerOption, MAX_TIMER_MS } from '../util/integer-option.js';

export interface SmtpMailerOptions {
  /** e.g. `smtp://user:pass@host:587` or `smtps://...` */
  url: string;
  /** Default From header. */
  from: string;
  /** How long a send may wait, in ms: for the connection (default 15 s), for the server's
   *  greeting (15 s), and for any answer once connected (60 s). nodemailer's own defaults (2 min,
   *  30 s, 10 min) let one stalled server hold an outbox delivery past its 5-minute lease. */
  timeouts?: { connectionMs?: number; greetingMs?: number; socketMs?: number };
}

const DEFAULT_TIMEOUTS = { connectionMs: 15_000, greetingMs: 15_000, socketMs: 60_000 };

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
  const given = opts.timeouts ?? {};
  const timeout = (name: keyof typeof DEFAULT_TIMEOUTS) =>
    integerOption(`smtpMailer: timeouts.${name}`, given[name], DEFAULT_TIMEOUTS[name], 1, MAX_TIMER_MS);
  const t = {
    connectionMs: timeout('connectionMs'),
    greetingMs: timeout('greetingMs'),
    socketMs: timeout('socketMs'),
  };
  const transport = nodemailer.createTransport({
    url: smtpUrl(opts.url),
    connectionTimeout: t.connectionMs,
    greetingTimeout: t.greetingMs,
    socketTimeout: t.socketMs,
    dnsTimeout: t.connectionMs,
  });
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
