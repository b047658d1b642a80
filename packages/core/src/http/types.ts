import type { ZodObject, ZodType } from 'zod';
import type { ErrorCode } from '../errors.js';
import type { Principal } from '../tokens/principal.js';

export type { Principal } from '../tokens/principal.js';

export type HeaderValue = string | string[] | undefined;

/** What an adapter hands to `postern.handle()`: plain data, no framework objects. */
export interface NeutralRequest {
  method: string;
  /** Path relative to where the adapter is mounted, optionally with `?query`. */
  path: string;
  /** Header names in lower case (Node's `IncomingMessage.headers` already is). */
  headers: Record<string, HeaderValue>;
  /** The raw body: bytes, or the request stream itself (read here, under the route's limit). */
  body?: Uint8Array | AsyncIterable<Uint8Array> | null;
  /** Socket address of the peer. */
  ip?: string;
  /** Where the host mounted the adapter (Express `req.baseUrl`, a Fastify register prefix),
   *  e.g. `/api`; the served OpenAPI document names it as its server. Empty or absent: `/`. */
  base?: string;
}

/** What an adapter writes back. `body` is already serialized. A header given as a list is
 *  sent once per value (`set-cookie`). */
export interface NeutralResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string | Uint8Array | null;
}

export interface RouteContext<B = unknown> {
  body: B;
  params: Record<string, string>;
  /** Read-only: a request without a query string shares one empty instance. */
  query: Pick<URLSearchParams, 'get' | 'getAll' | 'has' | 'size' | 'forEach' | 'entries' | 'keys' | 'values'>;
  headers: Record<string, HeaderValue>;
  /** Raw bytes of the body (always set; empty for bodiless requests). */
  rawBody: Uint8Array;
  ip: string;
  requestId: string;
  /** Set on routes with `auth: 'bearer'`. */
  principal: Principal;
  /** The matched route pattern, e.g. `/auth/sessions/:id` (for logs). */
  route: string;
  /** `NeutralRequest.base`, or `''`. */
  base: string;
}

export interface Reply {
  status: number;
  /** JSON-serialized unless it is a Uint8Array. */
  body?: unknown;
  headers?: Record<string, string | string[]>;
}

export type Area = 'auth' | 'inbox' | 'webhook';

/** The member of a Postern instance whose functions the routes of a table run (`ph.auth`,
 *  `ph.mfa`, `ph.inbox`). */
export type Library = 'auth' | 'mfa' | 'inbox';

/** One route. `Id`: the names its `operationId` may take (a table narrows it to the function
 *  names of its library, so a route cannot name a flow that does not exist). */
export interface RouteDef<B = any, Id extends string = string> {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  /** Path inside its area, e.g. `/login` or `/threads/:id`. */
  path: string;
  /** The route's one name: the library function it runs (`login` for `POST /auth/login`, as
   *  `ph.auth.login`), or a stable name of its own where no library function stands behind it
   *  (webhook intake, keys, the document). The OpenAPI document uses it as is. */
  operationId: Id;
  auth: 'none' | 'bearer';
  /** zod schema of the JSON body; absent = the body is ignored. */
  body?: ZodType<B>;
  /** The handler validates the parsed JSON against `body` itself: a library function that
   *  validates its input anyway (no second pass here), and where access is checked first, a
   *  caller without access gets 403/404 and learns nothing from validation. The layer still
   *  parses (malformed JSON is refused first); `body` then reaches the handler unvalidated. */
  validatesBody?: boolean;
  /** Raw routes (webhooks) get the bytes unparsed; the handler parses after verifying. */
  raw?: boolean;
  /** Browser sessions (cookie sessions on). `sets`: a success may set the refresh cookie (a
   *  login's answer marked by the flows). `rotates` and `ends`: the route takes a refresh
   *  token, and a JSON body without one takes it from the cookie once the request passed the
   *  cross-site checks (else 403 `csrf_refused`; no token either way: 401 `invalid_token`);
   *  `ends` clears the cookie the token was read from on success. */
  refreshCookie?: 'sets' | 'rotates' | 'ends';
  /** Max body bytes; defaults to the area's limit. */
  bodyLimit?: number;
  /** OpenAPI metadata. */
  summary: string;
  /** Success answers (and errors that need their own wording); `binary`: raw bytes of any type. */
  responses?: Record<number, { description: string; schema?: ZodType; binary?: boolean }>;
  /** The problem codes (`ErrorCode`) this route answers beyond those every route of its kind
   *  can (a body's 400/413/415, a Bearer route's 401 `invalid_token`, a store's 503
   *  `unavailable`): documented per status. */
  errors?: readonly ErrorCode[];
  /** No store behind it (keys, the document itself): the document lists no 503 `unavailable`,
   *  which every other route can answer. */
  storeless?: boolean;
  /** Query parameters, for the document only (the handler reads and checks them). */
  query?: ZodObject;
  /** Path parameters a route matches only when they fit (else the path is not this route's),
   *  and the document's description of them; absent: any non-empty segment. */
  params?: ZodObject;
  handler(ctx: RouteContext<B>): Promise<Reply> | Reply;
}

/** The routes of one area, declared together: the area (and so the mount point,
 *  `basePath[area]`) is given once for all of them. */
export interface RouteTable {
  area: Area;
  /** Where each route's `operationId` names a function (`ph[library][operationId]`); null
   *  for routes that run no library function. */
  library: Library | null;
  routes: readonly RouteDef[];
}

/** A route as an instance serves it: its table's area and library, and its full path
 *  (`/auth/login`, `/inbox/threads/:id`). */
export type MountedRoute = RouteDef & { area: Area; library: Library | null; fullPath: string };
