import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface FakeAttachment {
  id: string;
  filename: string;
  contentType: string;
  bytes: Uint8Array;
  contentId?: string | null;
  contentDisposition?: string | null;
  /** Overrides the `download_url` the API hands out (to test refused URLs). */
  downloadUrl?: string;
}

export interface FakeReceivedEmail {
  from?: string;
  to?: string[];
  cc?: string[];
  subject?: string;
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string | string[]>;
  message_id?: string;
  attachments?: FakeAttachment[];
}

export interface SentEmail {
  id: string;
  body: Record<string, any>;
  idempotencyKey: string | undefined;
}

export interface LoggedRequest {
  method: string;
  /** Raw path as it reached the server (percent-encoding intact). */
  path: string;
  authorization: string | undefined;
}

interface Fault {
  match: RegExp;
  status?: number;
  delayMs?: number;
  /** Remaining times this fault fires; Infinity for always. */
  times: number;
}

/** A Resend-compatible provider API on loopback: `GET /emails/receiving/{id}`,
 *  `GET /emails/receiving/{id}/attachments/{id}` (with a same-origin `download_url`),
 *  `POST /emails`. Faults (status codes, slow answers) are injected per path. */
export class FakeMailProvider {
  readonly token = `re_test_${randomUUID()}`;
  readonly emails = new Map<string, FakeReceivedEmail>();
  readonly sent: SentEmail[] = [];
  readonly requests: LoggedRequest[] = [];
  private faults: Fault[] = [];
  private downloads = new Map<string, FakeAttachment>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeMailProvider> {
    let fake!: FakeMailProvider;
    const server = createServer((req, res) => {
      fake.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    fake = new FakeMailProvider(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  /** Options for `createPostern({ provider })`. */
  config(extra: { timeoutMs?: number; maxResponseBytes?: number; maxAttachmentBytes?: number } = {}) {
    return { apiUrl: this.url, token: this.token, ...extra };
  }

  /** Makes requests whose path matches answer `status` (and/or wait `delayMs`), `times` times. */
  fail(match: RegExp, opts: { status?: number; delayMs?: number; times?: number }): void {
    this.faults.push({ match, status: opts.status, delayMs: opts.delayMs, times: opts.times ?? Infinity });
  }

  clearFaults(): void {
    this.faults = [];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? 'GET', path, authorization: req.headers.authorization });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);

    const fault = this.faults.find((f) => f.times > 0 && f.match.test(path));
    if (fault) {
      fault.times -= 1;
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.status) return this.json(res, fault.status, { message: 'injected fault' });
    }

    const download = /^\/downloads\/([\w-]+)$/.exec(path);
    if (req.method === 'GET' && download) {
      const a = this.downloads.get(download[1]!);
      if (!a) return this.json(res, 404, { message: 'not found' });
      res.writeHead(200, { 'content-type': a.contentType, 'content-length': a.bytes.byteLength });
      res.end(Buffer.from(a.bytes));
      return;
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return this.json(res, 401, { message: 'missing or invalid API key' });
    }
    const attachment = /^\/emails\/receiving\/([^/]+)\/attachments\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && attachment) {
      const email = this.emails.get(decodeURIComponent(attachment[1]!));
      const a = email?.attachments?.find((x) => x.id === decodeURIComponent(attachment[2]!));
      if (!a) return this.json(res, 404, { message: 'not found' });
      const key = randomUUID();
      this.downloads.set(key, a);
      return this.json(res, 200, {
        object: 'attachment',
        id: a.id,
        filename: a.filename,
        size: a.bytes.byteLength,
        content_type: a.contentType,
        content_disposition: a.contentDisposition ?? null,
        content_id: a.contentId ?? null,
        download_url: a.downloadUrl ?? `${this.url}/downloads/${key}`,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      });
    }
    const email = /^\/emails\/receiving\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && email) {
      const id = decodeURIComponent(email[1]!);
      const e = this.emails.get(id);
      if (!e) return this.json(res, 404, { message: 'not found' });
      return this.json(res, 200, {
        object: 'email',
        id,
        from: e.from ?? null,
        to: e.to ?? [],
        cc: e.cc ?? [],
        subject: e.subject ?? null,
        html: e.html ?? null,
        text: e.text ?? null,
        headers: e.headers ?? {},
        message_id: e.message_id ?? null,
        attachments: (e.attachments ?? []).map((a) => ({
          id: a.id,
          filename: a.filename,
          content_type: a.contentType,
          content_disposition: a.contentDisposition ?? null,
          content_id: a.contentId ?? null,
          size: a.bytes.byteLength,
        })),
      });
    }
    if (req.method === 'POST' && path === '/emails') {
      let body: Record<string, any>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return this.json(res, 422, { message: 'invalid JSON' });
      }
      const id = randomUUID();
      const key = req.headers['idempotency-key'];
      this.sent.push({ id, body, idempotencyKey: Array.isArray(key) ? key[0] : key });
      return this.json(res, 200, { id });
    }
    return this.json(res, 404, { message: 'not found' });
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}
