import { createPostern, type Postern, type PosternOptions, type Stores, silentLogger } from '@postern/core';
import { smtpMailer } from '@postern/core/mailers';
import { memoryStores } from '@postern/core/memory';
import { MailCatcher } from '../mail-catcher.js';
import { TestClock } from '../test-clock.js';
import { openApiConformance } from './conformance.js';

/** A real HTTP server on loopback serving `ph` through one adapter. */
export interface MountedServer {
  url: string;
  close(): Promise<void>;
}
/** Serves `ph` through one adapter on a real HTTP server on loopback. The host app also
 *  answers `HOST_ROUTE` (serve.ts), registered after Postern, to prove fall-through, and
 *  `HOST_AUTH_ROUTE`, guarded by the adapter's `requireAuth` (or `ph.authorize`), with `{ userId }`,
 *  and `HOST_FRESH_ROUTE` (`ph.auth.requireFreshAuth` behind the adapter's error handler). */
export type Mount = (ph: Postern) => Promise<MountedServer>;

/** The scenario groups of the HTTP contract, one per area. */
export type HttpContractArea = 'core' | 'auth' | 'browser' | 'mfa' | 'webhook' | 'inbox';

export interface HttpContractOptions {
  /** Fresh stores for one scenario group; default `memoryStores`. */
  stores?: (clock: TestClock) => Promise<Stores> | Stores;
  /** Only these areas' scenarios; default all. For a second, narrower run (e.g. one connection). */
  areas?: readonly HttpContractArea[];
}

export interface HttpContext {
  url: string;
  ph: Postern;
  /** Mails delivered over real SMTP to a loopback `smtp-server`. */
  mail: MailCatcher;
  clock: TestClock;
  /** `fetch` against the server; `json` sets the body and content type. Throws when the answer
   *  does not match the OpenAPI document the instance serves (status, JSON or problem body). */
  request(path: string, init?: RequestInit & { json?: unknown; bearer?: string }): Promise<Response>;
  close(): Promise<void>;
}

export interface HttpEnv {
  name: string;
  /** Starts a fresh Postern (its own stores, clock, SMTP catcher) behind the adapter. */
  setup(options?: Partial<PosternOptions>): Promise<HttpContext>;
}

export const TEST_WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export function createHttpEnv(name: string, mount: Mount, opts: HttpContractOptions = {}): HttpEnv {
  return {
    name,
    async setup(options = {}) {
      const clock = new TestClock();
      const mail = await MailCatcher.start();
      const stores = options.stores ?? (opts.stores ? await opts.stores(clock) : memoryStores({ clock }));
      const ph = createPostern({
        issuer: 'https://postern.test',
        audience: 'postern-test',
        mailer: smtpMailer({ url: mail.url, from: 'Postern <no-reply@postern.test>' }),
        settings: { 'inbox.mail.webhook-secret': TEST_WEBHOOK_SECRET },
        clock,
        // Scenarios refuse on purpose; their warnings would bury the test report.
        logger: silentLogger,
        ...options,
        stores,
      });
      const server = await mount(ph);
      const conforms = openApiConformance(ph);
      return {
        url: server.url,
        ph,
        mail,
        clock,
        async request(path, init = {}) {
          const { json, bearer, ...rest } = init;
          const headers = new Headers(rest.headers);
          if (json !== undefined) headers.set('content-type', 'application/json');
          if (bearer !== undefined) headers.set('authorization', `Bearer ${bearer}`);
          const method = rest.method ?? (json === undefined ? 'GET' : 'POST');
          const res = await fetch(server.url + path, {
            ...rest,
            method,
            headers,
            body: json === undefined ? rest.body : JSON.stringify(json),
          });
          // Every answer of every scenario is also checked against the published document.
          const mismatch = await conforms(method, server.url + path, res);
          if (mismatch) throw new Error(`OpenAPI conformance: ${mismatch}`);
          return res;
        },
        async close() {
          await server.close();
          await ph.close();
          await mail.close();
        },
      };
    },
  };
}
