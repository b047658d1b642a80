import {
  createGatehouse,
  type Gatehouse,
  type GatehouseOptions,
  type Stores,
  silentLogger,
} from '@gatehouse/core';
import { smtpMailer } from '@gatehouse/core/mailers';
import { memoryStores } from '@gatehouse/core/memory';
import { MailCatcher } from '../mail-catcher.js';
import { TestClock } from '../test-clock.js';
import { openApiConformance } from './conformance.js';

/** A real HTTP server on loopback serving `gh` through one adapter. */
export interface MountedServer {
  url: string;
  close(): Promise<void>;
}
/** Serves `gh` through one adapter on a real HTTP server on loopback. The host app also
 *  answers `HOST_ROUTE` (serve.ts), registered after Gatehouse, to prove fall-through, and
 *  `HOST_AUTH_ROUTE`, guarded by the adapter's `requireAuth` (or `gh.authorize`), with `{ userId }`,
 *  and `HOST_FRESH_ROUTE` (`gh.auth.requireFreshAuth` behind the adapter's error handler). */
export type Mount = (gh: Gatehouse) => Promise<MountedServer>;

/** The scenario groups of the HTTP contract, one per area. */
export type HttpContractArea = 'core' | 'auth' | 'mfa' | 'webhook' | 'inbox';

export interface HttpContractOptions {
  /** Fresh stores for one scenario group; default `memoryStores`. */
  stores?: (clock: TestClock) => Promise<Stores> | Stores;
  /** Only these areas' scenarios; default all. For a second, narrower run (e.g. one connection). */
  areas?: readonly HttpContractArea[];
}

export interface HttpContext {
  url: string;
  gh: Gatehouse;
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
  /** Starts a fresh Gatehouse (its own stores, clock, SMTP catcher) behind the adapter. */
  setup(options?: Partial<GatehouseOptions>): Promise<HttpContext>;
}

export const TEST_WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export function createHttpEnv(name: string, mount: Mount, opts: HttpContractOptions = {}): HttpEnv {
  return {
    name,
    async setup(options = {}) {
      const clock = new TestClock();
      const mail = await MailCatcher.start();
      const stores = options.stores ?? (opts.stores ? await opts.stores(clock) : memoryStores({ clock }));
      const gh = createGatehouse({
        issuer: 'https://gatehouse.test',
        audience: 'gatehouse-test',
        mailer: smtpMailer({ url: mail.url, from: 'Gatehouse <no-reply@gatehouse.test>' }),
        settings: { 'inbox.mail.webhook-secret': TEST_WEBHOOK_SECRET },
        clock,
        // Scenarios refuse on purpose; their warnings would bury the test report.
        logger: silentLogger,
        ...options,
        stores,
      });
      const server = await mount(gh);
      const conforms = openApiConformance(gh);
      return {
        url: server.url,
        gh,
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
          await gh.close();
          await mail.close();
        },
      };
    },
  };
}
