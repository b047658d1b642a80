import { createAuthArea } from './auth/index.js';
import type { PosternContext } from './context.js';
import { ConfigError } from './errors.js';
import { createAuthorizer, createHandler } from './http/handle.js';
import { openApiRoute } from './http/openapi.js';
import { Router } from './http/router.js';
import type { Area, NeutralRequest, NeutralResponse, RouteDef } from './http/types.js';
import { createInboxArea } from './inbox/index.js';
import { memoryStores } from './memory/index.js';
import { createMfaArea } from './mfa/index.js';
import { type PosternOptions, unknownOptions } from './options.js';
import { systemClock } from './ports/clock.js';
import { warningsLogger } from './ports/logger.js';
import { toSettings } from './ports/settings.js';
import { createKeyring } from './tokens/keyring.js';
import { clientIp, proxyTest } from './util/client-ip.js';

const KiB = 1024;

function joinPath(base: string, path: string): string {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  return path === '/' ? b || '/' : `${b}${path}`;
}

/** Builds a Postern instance: every flow as a function, a route table, and `handle()`
 *  for adapters. Synchronous: bad options (keys included) throw a `ConfigError` here. */
export function createPostern(options: PosternOptions) {
  if (!options.issuer) throw new ConfigError('issuer is required');
  if (!options.audience) throw new ConfigError('audience is required');
  const unknown = unknownOptions(options);
  if (unknown.length > 0) throw new ConfigError(`createPostern: unknown option(s) ${unknown.join(', ')}`);
  const logger = options.logger ?? warningsLogger;
  const clock = options.clock ?? systemClock;
  const stores = options.stores ?? memoryStores({ clock });
  const ctx = {
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
  } as PosternContext;

  const auth = createAuthArea(ctx);
  const mfa = createMfaArea(ctx);
  const inbox = createInboxArea(ctx);

  const base: Record<Area, string> = {
    auth: options.basePath?.auth ?? '/auth',
    inbox: options.basePath?.inbox ?? '/inbox',
    webhook: options.basePath?.webhook ?? '/inbox/webhook',
  };
  const limits = {
    auth: options.bodyLimits?.auth ?? 100 * KiB,
    webhook: options.bodyLimits?.webhook ?? 10 * KiB * KiB,
  };
  const router = new Router();
  const routes: Array<RouteDef & { fullPath: string }> = [];
  for (const route of [...auth.routes, ...mfa.routes, ...inbox.routes, openApiRoute(() => routes)]) {
    const fullPath = joinPath(base[route.area], route.path);
    router.add(route, fullPath);
    routes.push({ ...route, fullPath });
  }
  const prefixes = [...new Set(Object.values(base))];
  const owns = (path: string) => prefixes.some((p) => path === p || path.startsWith(`${p}/`));
  const trusted = proxyTest(options.trustedProxies ?? []);

  const http = {
    logger,
    authenticate: auth.authenticate,
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
    /** Every auth and MFA flow as a plain async function. */
    auth: { ...auth.api, ...mfa.api },
    inbox: inbox.api,
    outbox: inbox.outbox,
    /** Framework-neutral route table (adapters mount `handle`, not these). */
    routes,
    /** Mount points this instance answers under (404 problems there; anything else is the host's). */
    prefixes,
    /** Whether `path` lies under this instance's mount points (adapters: body-parser checks). */
    owns,
    handle,
    /** For the adapters' `requireAuth` guards: the principal of a request's Bearer token, or
     *  the problem to answer instead, checked and logged as Postern's own routes do. */
    authorize: createAuthorizer(http),
    jwks: () => ctx.keyring.jwks(),
    async close() {
      await inbox.outbox.stop?.();
      await auth.close();
      await stores.close?.();
    },
  };
}

export type Postern = ReturnType<typeof createPostern>;
