/** Stable error codes of the problem+json answers, with their HTTP status. */
export const errorStatus = {
  validation_failed: 400,
  invalid_json: 400,
  invalid_credentials: 401,
  invalid_token: 401,
  invalid_code: 401,
  webhook_signature_invalid: 401,
  reauth_required: 403,
  forbidden: 403,
  csrf_refused: 403,
  not_found: 404,
  request_timeout: 408,
  email_taken: 409,
  nothing_to_resend: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  webhook_not_configured: 503,
  unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

const titles: Record<ErrorCode, string> = {
  validation_failed: 'Validation failed',
  invalid_json: 'Body is not valid JSON',
  invalid_credentials: 'Invalid email or password',
  invalid_token: 'Invalid or expired token',
  invalid_code: 'Invalid or expired code',
  webhook_signature_invalid: 'Webhook signature invalid',
  reauth_required: 'Fresh authentication required',
  forbidden: 'Forbidden',
  csrf_refused: 'Cross-site request refused',
  not_found: 'Not found',
  request_timeout: 'Request timeout',
  email_taken: 'Email already registered',
  nothing_to_resend: 'Nothing to resend',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  headers_too_large: 'Request headers too large',
  webhook_not_configured: 'Webhook secret not configured',
  unavailable: 'Service unavailable',
  internal: 'Internal error',
};

/** The fixed title of a code's problem answer. */
export const errorTitle = (code: ErrorCode): string => titles[code];

export interface FieldError {
  path: string;
  message: string;
}

export interface PosternErrorOptions {
  detail?: string;
  errors?: FieldError[];
  /** Seconds, sent as `Retry-After` (429, 503). */
  retryAfter?: number;
  /** For the log line only, never in the answer (e.g. the limiter bucket of a 429). */
  reason?: string;
  cause?: unknown;
}

const BRAND = Symbol.for('postern.error');

/** The one error class for expected failures. Detected by brand, not `instanceof`,
 *  so two installed copies of the package still recognise each other's errors. */
export class PosternError extends Error {
  readonly [BRAND] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail?: string;
  readonly errors?: FieldError[];
  readonly retryAfter?: number;
  readonly reason?: string;

  constructor(code: ErrorCode, opts: PosternErrorOptions = {}) {
    super(opts.detail ?? titles[code], opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PosternError';
    this.code = code;
    this.status = errorStatus[code];
    this.detail = opts.detail;
    // A `validation_failed` answer always lists what failed, at least the body.
    this.errors =
      opts.errors ??
      (code === 'validation_failed' ? [{ path: '/', message: opts.detail ?? titles[code] }] : undefined);
    this.retryAfter = opts.retryAfter;
    this.reason = opts.reason;
  }

  get title(): string {
    return titles[this.code];
  }
}

export function isPosternError(e: unknown): e is PosternError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** Thrown at start-up for bad configuration; never reaches an HTTP client. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Thrown by store implementations for infrastructure failures (database down, ...).
 *  Mapped to 503 `unavailable` with `Retry-After`. */
const STORE_BRAND = Symbol.for('postern.store-error');

export class StoreError extends Error {
  readonly [STORE_BRAND] = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
  }
}

export function isStoreError(e: unknown): e is StoreError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[STORE_BRAND] === true;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail?: string;
  errors?: FieldError[];
}

/** RFC 9457 body for an error; unknown errors become `internal` with nothing inside. */
export function toProblem(e: unknown): { problem: Problem; retryAfter?: number } {
  const err = isPosternError(e)
    ? e
    : isStoreError(e)
      ? new PosternError('unavailable', { retryAfter: 1 })
      : new PosternError('internal');
  const problem: Problem = {
    type: `https://postern.dev/problems/${err.code.replaceAll('_', '-')}`,
    title: err.title,
    status: err.status,
    code: err.code,
  };
  if (err.detail !== undefined) problem.detail = err.detail;
  if (err.errors !== undefined) problem.errors = err.errors;
  return { problem, retryAfter: err.retryAfter };
}
