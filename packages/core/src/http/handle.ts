import { randomUUID } from 'node:crypto';
import { isPosternError, isStoreError, PosternError } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import { causeMessage, errorMessage } from '../util/error-message.js';
import { validate } from '../util/validated.js';
import { BEARER_CHALLENGES } from './bearer.js';
import { parseUtf8Json, readBody } from './body.js';
import { firstValue } from './header.js';
import {
  assertTrustedRequest,
  type CookieSessions,
  clearCookie,
  cookiePath,
  cookieSessionMark,
  readCookie,
  setCookie,
} from './refresh-cookie.js';
import { errorToResponse, replyToResponse } from './respond.js';
import type { Router } from './router.js';
import type {
  HeaderValue,
  MountedRoute,
  NeutralRequest,
  NeutralResponse,
  Principal,
  Reply,
  RouteDef,
} from './types.js';

export { validate } from '../util/validated.js';

export interface HandlerOptions {
  router: Router;
  logger: Logger;
  /** Max body bytes per area when a route does not set its own. */
  bodyLimit: (route: MountedRoute) => number;
  /** Verifies the `Authorization` header's Bearer access token; throws `invalid_token`.
   *  `meta` is for the log line of a refused token. */
  authenticate: (
    authorization: HeaderValue,
    meta?: { ip: string; route: string; requestId: string },
  ) => Promise<Principal>;
  /** Client address from the socket address and the headers (trusted proxies only). */
  clientIp: (req: Pick<NeutralRequest, 'ip' | 'headers'>) => string;
  /** Paths this instance owns (a 404 problem there); anything else is `null` so the host handles it. */
  owns: (path: string) => boolean;
  /** Browser sessions (the refresh token in a cookie), with the auth mount point; absent: off. */
  cookieSessions?: { config: CookieSessions; authBase: string };
}

/** Request ids only correlate log lines, so a counter behind a per-process random prefix
 *  does (as Fastify's own request ids do), at less cost than a UUID per request. */
const requestIdPrefix = randomUUID().slice(0, 8);
let requestCount = 0;
const nextRequestId = () => `${requestIdPrefix}-${(++requestCount).toString(36)}`;

/** The query of a path without one: shared, which the read-only `RouteContext.query` allows. */
const NO_QUERY = new URLSearchParams();

const jsonType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const identity = /^\s*(?:identity\s*)?$/i;

const header = (headers: Record<string, HeaderValue>, name: string) => firstValue(headers[name]);

/** A request's path without the query, and where the query starts (-1 for none). */
function splitQuery(url: string) {
  const q = url.indexOf('?');
  return { path: q === -1 ? url : url.slice(0, q), q };
}

/** The principal of the request's Bearer token (401 `invalid_token` otherwise). */
function bearerPrincipal(
  opts: Pick<HandlerOptions, 'authenticate'>,
  headers: Record<string, HeaderValue>,
  at: { ip: string; route: string; requestId: string },
): Promise<Principal> {
  return opts.authenticate(headers.authorization, at);
}

function parseJson(raw: Uint8Array, headers: Record<string, HeaderValue>): unknown {
  if (raw.byteLength === 0) return undefined;
  const type = header(headers, 'content-type');
  if (type === undefined || !jsonType.test(type)) throw new PosternError('unsupported_media_type');
  // Bodies are read as sent: a compressed one is a media type we do not take (RFC 9110 15.5.16).
  const coding = header(headers, 'content-encoding');
  if (coding !== undefined && !identity.test(coding)) throw new PosternError('unsupported_media_type');
  return parseUtf8Json(raw).value;
}

/** An empty body is `undefined` (bodiless routes accept it); where the route needs a body and
 *  the client said JSON, the empty body is what is wrong: `invalid_json`, not a field error.
 *  Validated against the schema unless the route's handler does that itself. */
function parseBody(route: RouteDef, raw: Uint8Array, headers: Record<string, HeaderValue>): unknown {
  const schema = route.body!;
  const value = parseJson(raw, headers);
  if (raw.byteLength === 0 && !schema.safeParse(undefined).success) {
    const type = header(headers, 'content-type');
    if (type !== undefined && jsonType.test(type)) throw new PosternError('invalid_json');
  }
  return route.validatesBody ? value : validate(schema, value);
}

/** The neutral HTTP layer: routing, limits, parsing, validation, auth and error mapping.
 *  Returns `null` for paths outside Postern's mount points so an adapter can fall through. */
export function createHandler(opts: HandlerOptions) {
  return async function handle(req: NeutralRequest): Promise<NeutralResponse | null> {
    const { path, q } = splitQuery(req.path);
    const method = req.method.toUpperCase();
    const matched = opts.router.match(method, path);
    if (!matched) {
      // RFC 9110 9.3.2: HEAD is a GET whose content is left out (a monitor's probe, a
      // download's size). Off the hot path: only an unmatched request looks again.
      if (method === 'HEAD' && opts.router.match('GET', path))
        return handle({ ...req, method: 'GET' }).then(withoutContent);
      return opts.owns(path) ? errorToResponse(new PosternError('not_found')) : null;
    }
    const { route, params, pattern } = matched;
    const requestId = nextRequestId();
    let ip = '';
    let principal: Principal | undefined;
    let fromCookie = false;
    try {
      ip = opts.clientIp(req);
      const read = readBody(req.body, req.headers, route.bodyLimit ?? opts.bodyLimit(route));
      const rawBody = read instanceof Uint8Array ? read : await read;
      // Who is asking comes before what they sent: an anonymous caller learns nothing from validation.
      principal =
        route.auth === 'bearer'
          ? await bearerPrincipal(opts, req.headers, { ip, route: pattern, requestId })
          : undefined;
      const cookies = opts.cookieSessions;
      const reads = route.refreshCookie === 'rotates' || route.refreshCookie === 'ends';
      const cookie = reads && cookies && readCookie(req.headers.cookie, cookies.config.name);
      // A cookie rides along on its own, so what it authorizes must come from a trusted page;
      // checked before the body, whose media type is part of the check.
      if (cookie) assertTrustedRequest(cookies!.config, req.headers);
      // Raw routes (webhooks) verify a signature before anything looks at the body.
      let body = route.raw ? undefined : route.body ? parseBody(route, rawBody, req.headers) : undefined;
      if (reads && cookies && (body as { refreshToken?: string } | undefined)?.refreshToken === undefined) {
        if (!cookie) throw new PosternError('invalid_token');
        body = { ...(body as object), refreshToken: cookie };
        fromCookie = true;
      }
      const reply = await route.handler({
        body,
        params,
        query: q === -1 ? NO_QUERY : new URLSearchParams(req.path.slice(q + 1)),
        headers: req.headers,
        rawBody,
        ip,
        requestId,
        principal: principal as Principal,
        route: pattern,
        base: req.base ?? '',
      });
      // Only the routes that set, rotate or clear the cookie have anything to put in it.
      if (cookies && route.refreshCookie)
        withRefreshCookie(reply, cookies, req.base ?? '', fromCookie && route.refreshCookie === 'ends');
      return replyToResponse(reply);
    } catch (e) {
      const res = failed(opts.logger, e, { principal, route: pattern, requestId, ip });
      // A cookie whose token is refused is dead: the browser should stop sending it.
      if (fromCookie && isPosternError(e) && e.code === 'invalid_token')
        res.headers['set-cookie'] = clearCookie(
          opts.cookieSessions!.config,
          cookiePath(req.base ?? '', opts.cookieSessions!.authBase),
        );
      // Only a refused Bearer token, not what a handler refused after it passed.
      return route.auth === 'bearer' && principal === undefined ? challenge(res, req.headers) : res;
    }
  };
}

/** A cookie session's answer carries its refresh token in the cookie, not in the JSON; a
 *  logout with the cookie clears it. */
function withRefreshCookie(
  reply: Reply,
  cookies: NonNullable<HandlerOptions['cookieSessions']>,
  hostBase: string,
  clear: boolean,
): void {
  const path = cookiePath(hostBase, cookies.authBase);
  const body = reply.body as { refreshToken?: string } | undefined;
  let value: string | undefined;
  const maxAge = cookieSessionMark(body);
  if (maxAge !== undefined && body?.refreshToken !== undefined) {
    value = setCookie(cookies.config, path, body.refreshToken, maxAge);
    const { refreshToken: _, ...rest } = body;
    reply.body = rest;
  } else if (clear) value = clearCookie(cookies.config, path);
  if (value !== undefined)
    reply.headers = {
      ...reply.headers,
      'set-cookie': [...[reply.headers?.['set-cookie'] ?? []].flat(), value],
    };
}

/** The answer to a HEAD: the GET's status and headers, its length, no content. */
function withoutContent(res: NeutralResponse | null): NeutralResponse | null {
  if (res?.body == null) return res;
  res.headers['content-length'] = String(Buffer.byteLength(res.body));
  res.body = null;
  return res;
}

/** RFC 6750 3.1: a 401 of a Bearer-protected resource says how to authenticate, and names the
 *  error only when a token was sent. */
function challenge(res: NeutralResponse, headers: Record<string, HeaderValue>): NeutralResponse {
  if (res.status === 401)
    res.headers['www-authenticate'] =
      headers.authorization === undefined ? BEARER_CHALLENGES.none : BEARER_CHALLENGES.invalid;
  return res;
}

/** The answer to a failed request, logged as every route's: an unexpected error as
 *  `internal_error`, a store failure as `store_unavailable` (warn), a 429 as `rate_limited` with its bucket, with
 *  the standard fields of a security event (userId and sid once a Bearer token verified). */
function failed(
  logger: Logger,
  e: unknown,
  at: { principal: Principal | undefined; route: string; requestId: string; ip: string },
): NeutralResponse {
  const fields = {
    outcome: 'failure',
    userId: at.principal?.userId ?? null,
    sid: at.principal?.sid ?? null,
    route: at.route,
    requestId: at.requestId,
    ip: at.ip,
  };
  if (isStoreError(e)) {
    // Operational, not a bug: what failed underneath (the driver's "connect ECONNREFUSED ..."),
    // without a stack on every request of an outage.
    logger.warn(
      { event: 'store_unavailable', ...fields, err: errorMessage(e), cause: causeMessage(e) ?? null },
      'store unavailable',
    );
  } else if (!isPosternError(e)) {
    logger.error(
      { event: 'internal_error', ...fields, err: e instanceof Error ? e.stack : String(e) },
      'unhandled error',
    );
  } else if (e.code === 'rate_limited') {
    logger.warn({ event: 'rate_limited', ...fields, reason: e.reason ?? null }, 'rate limited');
  } else if (e.code === 'csrf_refused') {
    // A page of another origin made the browser send the refresh cookie, or a client forgot
    // its JSON content type: either way worth a look.
    logger.warn({ event: 'csrf_refused', ...fields, reason: e.reason ?? null }, 'cross-site request refused');
  }
  return errorToResponse(e);
}

/** What a host route guarded by an adapter's `requireAuth` gets: the principal of the
 *  request's Bearer token, or the answer to send instead (401 problem, or 503/500 when a store
 *  or a bug failed), logged exactly as Postern's own routes log theirs. Never rejects. */
export type Authorization =
  | { principal: Principal; response?: undefined }
  | { principal?: undefined; response: NeutralResponse };

export function createAuthorizer(opts: Pick<HandlerOptions, 'authenticate' | 'clientIp' | 'logger'>) {
  return async function authorize(
    req: Pick<NeutralRequest, 'headers' | 'ip' | 'path'>,
  ): Promise<Authorization> {
    const { path: route } = splitQuery(req.path);
    const requestId = nextRequestId();
    let ip = '';
    try {
      ip = opts.clientIp(req);
      return { principal: await bearerPrincipal(opts, req.headers, { ip, route, requestId }) };
    } catch (e) {
      return {
        response: challenge(
          failed(opts.logger, e, { principal: undefined, route, requestId, ip }),
          req.headers,
        ),
      };
    }
  };
}
