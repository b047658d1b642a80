import type { Logger } from '../ports/logger.js';

/** Where a flow was called from: an HTTP route, or the library (then only what the host passed). */
export interface RequestMeta {
  /** Client address (the socket address, or a trusted proxy's forwarded one). Library calls
   *  without it skip the per-address limits. */
  ip?: string;
  userAgent?: string;
  requestId?: string;
  route?: string;
}

/** The address for per-address limits; library calls without one skip those limits. */
export const ipOf = (meta?: RequestMeta | null): string => meta?.ip ?? '';

/** The parts of a route's context (`RouteContext`) a flow's log lines and limits use. */
export interface RouteRequest {
  ip: string;
  requestId: string;
  route: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A route's request as the flows see it. */
export function metaOf(rc: RouteRequest): RequestMeta {
  const ua = rc.headers['user-agent'];
  return {
    ip: rc.ip,
    userAgent: (Array.isArray(ua) ? ua[0] : ua)?.slice(0, 256),
    requestId: rc.requestId,
    route: rc.route,
  };
}

export interface AuthEvent {
  event: string;
  /** `pending`: a step succeeded and the flow waits for the next (MFA after the password). */
  outcome: 'success' | 'failure' | 'pending';
  reason?: string;
  userId?: string | null;
  sid?: string | null;
  [field: string]: unknown;
}

/** One security event (docs/auth.md, Logging): constant message, user input only in fields,
 *  never a password, code or token. A refusal (outcome `failure`) is a `warn` whatever `level`
 *  says: the default logger keeps warnings and drops `info`, and refusals are what an operator
 *  must see. The logger adds the time. */
export function logAuthEvent(
  logger: Logger,
  level: 'info' | 'warn',
  e: AuthEvent,
  meta?: RequestMeta | null,
): void {
  const { event, outcome, reason, userId, sid, ...extra } = e;
  logger[outcome === 'failure' ? 'warn' : level](
    {
      event,
      outcome,
      reason: reason ?? null,
      userId: userId ?? null,
      sid: sid ?? null,
      ip: meta?.ip ?? null,
      route: meta?.route ?? null,
      requestId: meta?.requestId ?? null,
      ...extra,
    },
    `auth ${event} ${outcome}`,
  );
}
