/** A field the server refused, as in a 400 `validation_failed` answer. */
export interface FieldError {
  path: string;
  message: string;
}

export interface ClientErrorInit {
  status: number;
  code: string;
  title?: string;
  detail?: string;
  retryAfter?: number;
  errors?: FieldError[];
}

/** Every failure of a client call: the server's problem answer (RFC 9457) with its stable `code`,
 *  or `network_error` (status 0) when no answer came. */
export class PosternClientError extends Error {
  override readonly name = 'PosternClientError';
  readonly status: number;
  readonly code: string;
  /** The problem's short, human summary (`Invalid credentials`). */
  readonly title: string | undefined;
  readonly detail: string | undefined;
  /** Seconds to wait before trying again (the `Retry-After` of a 429 or 503). */
  readonly retryAfter: number | undefined;
  readonly errors: FieldError[];

  constructor(init: ClientErrorInit) {
    super(init.detail ?? init.title ?? init.code);
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.retryAfter = init.retryAfter;
    this.errors = init.errors ?? [];
  }
}

/** The error of a non-2xx answer: its problem body when there is one. */
export async function errorOf(res: Response): Promise<PosternClientError> {
  let p: Record<string, any> = {};
  try {
    p = await res.json();
  } catch {
    // not JSON (a proxy's HTML page): the status alone
  }
  const header = res.headers.get('retry-after');
  const seconds = header === null ? Number.NaN : Number(header);
  return new PosternClientError({
    status: res.status,
    code: typeof p.code === 'string' ? p.code : `http_${res.status}`,
    title: p.title,
    detail: p.detail,
    retryAfter: Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined,
    errors: Array.isArray(p.errors) ? p.errors : [],
  });
}

export const networkError = (e: unknown) =>
  new PosternClientError({ status: 0, code: 'network_error', detail: String((e as Error)?.message ?? e) });
