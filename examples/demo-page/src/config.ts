import {
  ConfigError,
  directoryFiles,
  type Logger,
  mailNotifier,
  type PosternOptions,
  type Stores,
} from '@postern/core';
import { consoleMailer, smtpMailer } from '@postern/core/mailers';
import { readSigningKeys } from './keys.js';
import { jsonLogger, logLevel } from './logger.js';

export type Env = Record<string, string | undefined>;

/** Everything an example app needs to start, read from the environment (README.md lists them). */
export interface AppConfig {
  port: number;
  host: string;
  /** Browser origin; the WebAuthn relying-party id is its host name. */
  origin: string;
  /** Outbox deliveries at once in this process; 0 = intake only (workers run elsewhere). */
  workers: number;
  databaseUrl?: string;
  logger: Logger;
  /** Options for `createPostern`. */
  postern: PosternOptions;
  /** Releases what the config opened (SMTP connections, the Postgres pool); call after `ph.close()`. */
  close(): Promise<void>;
}

function integer(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function originOf(raw: string): URL {
  try {
    const url = new URL(raw);
    if (url.origin === raw.replace(/\/$/, '')) return url;
  } catch {}
  throw new ConfigError(`ORIGIN must be a bare origin like https://app.example, got ${JSON.stringify(raw)}`);
}

/** `smtpMailer`'s refusal, naming the variable (its value may hold a password: not quoted). */
function smtpFrom(url: string, from: string) {
  try {
    return smtpMailer({ url, from });
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ConfigError('SMTP_URL must look like smtp://host:port or smtps://user:pass@host:port');
    throw err;
  }
}

/** Where an ephemeral signing key hurts: production, state that outlives the process (a
 *  database, shared by other instances), or a browser origin that is not this machine. */
function productionLike(env: Env, origin: URL): boolean {
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(origin.hostname);
  return env.NODE_ENV === 'production' || Boolean(env.DATABASE_URL) || !local;
}

/** Postgres stores, loaded only when DATABASE_URL is set: the in-memory path never imports
 *  `pg` or `@postern/postgres`. Applies pending migrations to `schema` first. */
async function postgres(
  url: string,
  schema: string | undefined,
  logger: Logger,
): Promise<{ stores: Stores; close(): Promise<void> }> {
  const [{ default: pg }, { migrate, postgresStores }] = await Promise.all([
    import('pg'),
    import('@postern/postgres'),
  ]);
  // Migrations through a pool of their own without a query timeout: they wait for other
  // processes' migrations (an advisory lock) and DDL may run long.
  const migrator = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5_000 });
  try {
    await migrate(migrator, { logger, schema });
  } catch (err) {
    // A bad DATABASE_SCHEMA lands here: name the variables, not only the library option.
    throw err instanceof ConfigError ? new ConfigError(`DATABASE_URL/DATABASE_SCHEMA: ${err.message}`) : err;
  } finally {
    await migrator.end();
  }
  // Bounded waits: without them a partitioned or locked database hangs requests (instead of
  // 503 `unavailable`) and a stop that waits for them (docs/postgres.md, Failures). The server
  // gives up first (`statement_timeout`), so a statement the app stopped waiting for never
  // commits later and never keeps its connection busy behind the pool's back.
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    statement_timeout: 10_000,
    query_timeout: 15_000,
    keepAlive: true,
  });
  return { stores: postgresStores({ pool, logger, schema }), close: () => pool.end() };
}

/** Reads the example apps' configuration: `PORT` (3000), `HOST` (127.0.0.1), `ORIGIN`
 *  (http://localhost:$PORT), `DATABASE_URL` (absent: in memory) with `DATABASE_SCHEMA` (postern),
 *  `JWT_PRIVATE_KEYS` or `JWT_PRIVATE_KEYS_FILE` (a JWK or JWK set, see keys.ts; absent: ephemeral),
 *  `SMTP_URL` (absent: mails printed to the console), `WEBHOOK_SECRET`,
 *  `PROVIDER_API_URL` + `PROVIDER_API_TOKEN`, `FILES_DIR` (absent: in memory), `WORKERS` (1),
 *  `SIGNUP` (`off` switches the route off), `TRUSTED_PROXIES` (none), `LOG_LEVEL` (info),
 *  `MFA_ENCRYPTION_KEY` (32 bytes, base64: seals TOTP seeds; absent: ephemeral), `MFA_REQUIRED` (`on`),
 *  `ACCESS_TOKEN_TTL_SECONDS` (900). Browser sessions (the refresh token in an HttpOnly cookie)
 *  are on for pages of `ORIGIN`. */
export async function readConfig(env: Env = process.env): Promise<AppConfig> {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const origin = originOf(env.ORIGIN || `http://localhost:${port}`);
  const workers = integer(env, 'WORKERS', 1, 0, 64);
  // Short lifetimes let tests watch access tokens expire and refresh in seconds.
  const accessTokenTtlSeconds = integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 900, 1, 86_400);
  const logger = jsonLogger(logLevel(env.LOG_LEVEL));
  // Before anything that opens connections, so a bad key leaves nothing to close.
  const keys = await readSigningKeys(env);
  if (!keys && productionLike(env, origin)) {
    logger.warn(
      { event: 'config_warning', reason: 'no_signing_keys' },
      'JWT_PRIVATE_KEYS is not set: this process signs with its own ephemeral key, so other instances refuse its access tokens and a restart invalidates them',
    );
  }
  if (!env.MFA_ENCRYPTION_KEY && productionLike(env, origin)) {
    logger.warn(
      { event: 'config_warning', reason: 'no_mfa_encryption_key' },
      'MFA_ENCRYPTION_KEY is not set: TOTP seeds are sealed with an ephemeral key, so other instances and this one after a restart cannot check authenticator codes',
    );
  }
  if (env.DATABASE_URL && !env.FILES_DIR) {
    logger.warn(
      { event: 'config_warning', reason: 'files_in_memory' },
      'FILES_DIR is not set: attachments are kept in this process only, so another process (the worker, or the HTTP process beside it) cannot serve them and a restart loses them while their rows stay; set FILES_DIR to one directory every process shares',
    );
  }
  const from = `Postern demo <no-reply@${origin.hostname}>`;
  const smtp = env.SMTP_URL ? smtpFrom(env.SMTP_URL, from) : undefined;
  const mailer = smtp ?? consoleMailer();
  const db = env.DATABASE_URL
    ? await postgres(env.DATABASE_URL, env.DATABASE_SCHEMA || undefined, logger)
    : undefined;

  const postern: PosternOptions = {
    issuer: origin.origin,
    audience: 'postern-demo',
    keys,
    accessTokenTtlSeconds,
    // The demo page signs in with `refreshToken: 'cookie'`; only pages of ORIGIN may refresh.
    cookieSessions: { trustedOrigins: [origin.origin] },
    stores: db?.stores,
    mailer,
    logger,
    settings: { 'inbox.mail.webhook-secret': env.WEBHOOK_SECRET || undefined },
    provider: env.PROVIDER_API_URL
      ? { apiUrl: env.PROVIDER_API_URL, token: env.PROVIDER_API_TOKEN || undefined }
      : undefined,
    files: env.FILES_DIR ? directoryFiles(env.FILES_DIR) : undefined,
    notifier: mailNotifier(mailer),
    webauthn: { rpId: origin.hostname, rpName: 'Postern demo', origin: origin.origin },
    mfa: { encryptionKey: env.MFA_ENCRYPTION_KEY || undefined, required: env.MFA_REQUIRED === 'on' },
    routes: { signup: env.SIGNUP !== 'off' },
    trustedProxies: (env.TRUSTED_PROXIES ?? '').split(/[\s,]+/).filter(Boolean),
    outbox: { concurrency: Math.max(1, workers) },
  };
  return {
    port,
    host,
    origin: origin.origin,
    workers,
    databaseUrl: env.DATABASE_URL || undefined,
    logger,
    postern,
    async close() {
      smtp?.close();
      await db?.close();
    },
  };
}
