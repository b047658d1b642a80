import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  to: string[];
  subject: string;
  text: string;
  html: string | false;
  headers: ParsedMail['headers'];
}

/** A real SMTP server on loopback that keeps every mail it receives. */
export class MailCatcher {
  readonly mails: CaughtMail[] = [];
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
    /** Server and connection errors (e.g. a client resetting mid-mail), oldest first. Recorded,
     *  never thrown: without a listener an 'error' event would crash the test process. */
    readonly errors: Error[],
  ) {}

  static async start(): Promise<MailCatcher> {
    let catcher!: MailCatcher;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((m) => {
            const to = [m.to]
              .flat()
              .flatMap((a) => (a ? a.value.map((v) => (v.address ?? '').toLowerCase()) : []));
            catcher.mails.push({
              to,
              subject: m.subject ?? '',
              text: m.text ?? '',
              html: m.html,
              headers: m.headers,
            });
            for (const w of catcher.waiters.splice(0)) w();
            callback();
          })
          .catch(callback);
      },
    });
    const errors: Error[] = [];
    server.on('error', (err: Error) => errors.push(err));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.server.address() as { port: number };
    catcher = new MailCatcher(server, `smtp://127.0.0.1:${port}`, errors);
    return catcher;
  }

  /** Waits (up to `timeoutMs`) for a mail to `to` matching `match`; the newest one wins. */
  async waitFor(
    to: string,
    match: (m: CaughtMail) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<CaughtMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.mails.filter((m) => m.to.includes(to.toLowerCase()) && match(m)).at(-1);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** All mails to `to`, oldest first. */
  to(to: string): CaughtMail[] {
    return this.mails.filter((m) => m.to.includes(to.toLowerCase()));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
