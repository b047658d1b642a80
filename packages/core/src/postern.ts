import type { JWK } from 'jose';
import type { AuthApi } from './auth/api-types.js';
import { housekeepingRoutes } from './auth/housekeeping-routes.js';
import { createAuthArea } from './auth/index.js';
import { createAuthServices } from './auth/services.js';
import type { PosternBase } from './context.js';
import { ConfigError } from './errors.js';
import { type Authorization, createAuthorizer, createHandler } from './http/handle.js';
import { mountRoutes } from './http/route-table.js';
import { Router } from './http/router.js';
import type { MountedRoute, NeutralRequest, NeutralResponse } from './http/types.js';
import type { InboxApi } from './inbox/api-types.js';
import { createInboxArea } from './inbox/index.js';
import { memoryStores } from './memory/index.js';
import type { MfaApi } from './mfa/api-types.js';
import { createMfaArea } from './mfa/index.js';
import { assertOptionGroups, type PosternOptions, resolveHttpOptions, unknownOptions } from './options.js';
import { createOutbox, type Outbox, resolveOutboxOptions } from './outbox/index.js';
import { systemClock } from './ports/clock.js';
import { warningsLogger } from './ports/logger.js';
import { toSettings } from './ports/settings.js';
import { createKeyring } from './tokens/keyring.js';
import { clientIp, proxyTest } from './util/client-ip.js';
import { createWebhookRoutes } from './webhook/index.js';

/** A Postern instance (`ph`): the flows as functions by area, the outbox, and the hooks the
 *  framework adapters mount. */
export interface Postern {
  /** Accounts, logins, sessions, passwords, e-mail proof and change, admin calls, and the one
   *  library call that checks an access token (`verifyAccessToken`). */
  auth: AuthApi;
  /** Second factors: finishing a login that answered `mfaRequired`, the user's factors,
   *  enrolment during a login under `mfa.required`. */
  mfa: MfaApi;
  /** Inbox accounts, members, threads and messages, and the received-webhook consumers. */
  inbox: InboxApi;
  /** The transactional outbox received webhooks go through (start, drain, replay, stats). */
  outbox: Outbox;
  /** The public keys of the access-token signing keys, as `/.well-known/jwks.json` serves them. */
  jwks(): Promise<{ keys: JWK[] }>;
  /** Stops the outbox workers and closes the stores. */
  close(): Promise<void>;

  // Adapter hooks: what `@postern/express`, `@postern/fastify` or a host's own adapter mount.
  // A host's code uses the adapter's `requireAuth` and the flows above instead.

  /** Answers a request under this instance's mount points; `null` for a path it does not own. */
  handle(req: NeutralRequest): Promise<NeutralResponse | null>;
  /** Mount points this instance answers under (404 problems there; anything else is the host's). */
  readonly prefixes: readonly string[];
  /** Whether `path` lies under this instance's mount points (adapters: body-parser checks). */
  owns(path: string): boolean;
  /** What a route guard (`requireAuth`) runs: the principal of a request's Bearer token, or
   *  the problem to answer instead, checked and logged as Postern's own routes do. */
  authorize(req: Pick<NeutralRequest, 'headers' | 'ip' | 'path'>): Promise<Authorization>;
  /** The route table with full paths (the OpenAPI document and conformance tests read it). */
  readonly routes: readonly MountedRoute[];
}

/** Builds a Postern instance: every flow as a function, a route table, and `handle()`
 *  for adapters. Synchronous: bad options (keys included) throw a `ConfigError` here. */
export function createPostern(options: PosternOptions): Postern {
  if (!options.issuer) throw new ConfigError('issuer is required');
  if (!options.audience) throw new ConfigError('audience is required');
  assertOptionGroups(options);
  const unknown = unknownOptions(options);
  if (unknown.length > 0) throw new ConfigError(`createPostern: unknown option(s) ${unknown.join(', ')}`);
  const { basePath: base, bodyLimits: limits } = resolveHttpOptions(options);
  const logger = options.logger ?? warningsLogger;
  const clock = options.clock ?? systemClock;
  const stores = options.stores ?? memoryStores({ clock, logger });
  // Built in order, each from what is made before it: the base, the shared services on it,
  // then each area from a typed dependency object, taking back what it returns.
  const baseCtx: PosternBase = {
    options,
    stores,
    clock,
    logger,
    keyring: createKeyring({ keys: options.keys, issuer: options.issuer, logger, clock }),
    mailer: options.mailer ?? {
      async send(mail) {
        logger.warn({ event: 'mail_dropped', subject: mail.subject }, 'no mailer configured; mail not sent');
      },
    },
    settings: toSettings(options.settings),
  };
  const services = createAuthServices(baseCtx);
  const { ctx } = services;

  const mfa = createMfaArea({ ctx });
  const auth = createAuthArea({ ...services, mfa: mfa.gate });
  const inbox = createInboxArea({ ctx, deliveryAttempts: resolveOutboxOptions(options.outbox).maxAttempts });

  const outbox = createOutbox(ctx, { retention: inbox.retention });
  for (const [event, consumer] of inbox.subscriptions) outbox.subscribe(event, consumer);
  const webhookRoutes = createWebhookRoutes(ctx, outbox);

  const routes: MountedRoute[] = mountRoutes(
    [
      auth.routes,
      mfa.routes,
      webhookRoutes,
      inbox.routes,
      housekeepingRoutes(
        () => ctx.keyring.jwks(),
        () => routes,
      ),
    ],
    base,
  );
  const router = new Router();
  for (const route of routes) router.add(route);
  const prefixes = [...new Set(Object.values(base))];
  const owns = (path: string) => prefixes.some((p) => path === p || path.startsWith(`${p}/`));
  const trusted = proxyTest(options.trustedProxies ?? []);

  const http = {
    logger,
    authenticate: auth.authenticateHeader,
    clientIp: (req: Pick<NeutralRequest, 'ip' | 'headers'>) => clientIp(req, trusted),
  };
  const handle: (req: NeutralRequest) => Promise<NeutralResponse | null> = createHandler({
    ...http,
    router,
    bodyLimit: (route) => (route.area === 'webhook' ? limits.webhook : limits.auth),
    owns,
    cookieSessions: auth.cookieSessions ? { config: auth.cookieSessions, authBase: base.auth } : undefined,
  });

  return {
    auth: auth.api,
    mfa: mfa.api,
    inbox: inbox.api,
    outbox,
    routes,
    prefixes,
    owns,
    handle,
    authorize: createAuthorizer(http),
    jwks: () => ctx.keyring.jwks(),
    async close() {
      await outbox.stop?.();
      await services.close();
      await stores.close?.();
    },
  };
}
