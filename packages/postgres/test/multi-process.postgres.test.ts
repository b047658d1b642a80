import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createPostern } from '@postern/core';
import { STATUS_RANK } from '@postern/core/ports';
import { MailCatcher, standardWebhookHeaders, TEST_WEBHOOK_SECRET } from '@postern/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, serverUrl } from './helpers/test-db.js';

// At-least-once delivery with exactly one effect, across processes: two example apps (intake
// only, WORKERS=0) and three example workers share one database. 1,000 signed webhooks (inbound
// mail and delivery events, with redeliveries) go to both apps while one worker is killed with
// SIGKILL. Afterwards every acknowledged webhook has had exactly one effect: none lost, none
// doubled.

const server = await serverUrl();
const root = fileURLToPath(new URL('../../../', import.meta.url));
const ACCOUNTS = 4;
const OUTBOUND = 20;
const INBOUND = 350; // distinct inbound mails
const INBOUND_REDELIVERED = 75; // the same webhook (same webhook-id) posted again
const INBOUND_RESENT = 50; // the same mail (same email_id) under a new webhook-id
const EVENTS = 400; // distinct delivery/engagement events
const EVENTS_REDELIVERED = 125;
const EVENT_TYPES = ['sent', 'delivered', 'delivery_delayed', 'opened', 'clicked', 'bounced'] as const;
const STATUS_OF: Record<string, keyof typeof STATUS_RANK | null> = {
  sent: 'sent',
  delivered: 'delivered',
  delivery_delayed: 'delayed',
  bounced: 'bounced',
  opened: null,
  clicked: null,
};

interface Webhook {
  id: string;
  path: string;
  body: string;
  kind: 'inbound' | 'event';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** One example process (`node --import tsx <script>`), so SIGKILL hits the process itself. */
function start(
  app: 'express-app' | 'fastify-app',
  script: string,
  env: Record<string, string>,
): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: `${root}examples/${app}`,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  const keep = (b: Buffer) => {
    tail.push(b.toString());
    if (tail.length > 400) tail.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  (child as ChildProcess & { tail: string[] }).tail = tail;
  return child;
}

async function waitUntil(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!server)(
  `several app and worker processes on one database${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
  () => {
    const dbName = `ph_mp_${randomBytes(4).toString('hex')}`;
    const children: ChildProcess[] = [];
    let admin: pg.Pool;
    let pool: pg.Pool;
    let mail: MailCatcher;
    let dbUrl: string;

    beforeAll(async () => {
      admin = new pg.Pool({ connectionString: server!, max: 1 });
      await admin.query(`CREATE DATABASE ${dbName}`);
      const u = new URL(server!);
      u.pathname = `/${dbName}`;
      dbUrl = u.toString();
      pool = new pg.Pool({ connectionString: dbUrl, max: 4 });
      mail = await MailCatcher.start();
      // The killed worker's SMTP connection is reset mid-session; smtp-server reports that as an
      // 'error' event, which must not count as a failure of this test.
      (mail as unknown as { server: { on(e: 'error', f: () => void): void } }).server.on('error', () => {});
    });

    afterAll(async () => {
      const alive = children.filter((c) => c.exitCode === null && c.signalCode === null);
      await Promise.all(
        alive.map(
          (c) =>
            new Promise<void>((resolve) => {
              c.once('exit', () => resolve());
              c.kill('SIGTERM');
              setTimeout(() => {
                c.kill('SIGKILL');
                resolve();
              }, 5000).unref();
            }),
        ),
      );
      await pool?.end();
      await mail?.close();
      await admin?.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin?.end();
    });

    it('gives every acknowledged webhook exactly one effect while a worker is killed mid-run', async () => {
      const t0 = Date.now();
      const phases: string[] = [];
      const phase = (name: string) => phases.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      const env = {
        DATABASE_URL: dbUrl,
        WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
        SMTP_URL: mail.url,
        HOST: '127.0.0.1',
      };
      // Two intake-only apps and three workers, all migrating the same database as they start.
      const ports = [await freePort(), await freePort()];
      const apps = [
        start('express-app', 'src/server.ts', { ...env, PORT: String(ports[0]), WORKERS: '0' }),
        start('fastify-app', 'src/server.ts', { ...env, PORT: String(ports[1]), WORKERS: '0' }),
      ];
      const workers = [1, 2, 3].map(() => start('express-app', 'src/worker.ts', { ...env, WORKERS: '4' }));
      children.push(...apps, ...workers);
      const urls = ports.map((p) => `http://127.0.0.1:${p}`);
      for (const url of urls) {
        await waitUntil(`${url} to listen`, async () => (await fetch(`${url}/auth/openapi.json`)).ok, 60_000);
      }

      phase('apps listening');
      // Accounts with an owner and a member each, and outbound mail for delivery events to name.
      const stores = postgresStores({ pool, listen: false });
      const ph = createPostern({ issuer: 'https://mp.test', audience: 'mp', stores });
      const accounts: string[] = [];
      const users: string[] = [];
      for (let i = 0; i < ACCOUNTS; i++) {
        const { user } = await ph.auth.signup({
          name: `Owner ${i}`,
          email: `owner${i}@mp.test`,
          password: `Quartz-Lantern-${i}-Meadow-Falcon`,
        });
        // Members added by email count (and are notified) once their address is proven.
        await stores.users.markEmailVerified(user.id);
        users.push(user.id);
      }
      for (let i = 0; i < ACCOUNTS; i++) {
        const account = await ph.inbox.createAccount(users[i]!, {
          address: `box${i}@mp.test`,
          name: `Box ${i}`,
        });
        await ph.inbox.addMember(users[i]!, account.id, {
          email: `owner${(i + 1) % ACCOUNTS}@mp.test`,
          role: 'member',
        });
        accounts.push(account.id);
      }
      for (let k = 0; k < OUTBOUND; k++) {
        await ph.inbox.recordOutbound({
          accountId: accounts[k % ACCOUNTS]!,
          providerMessageId: `out-${k}`,
          to: `customer${k}@elsewhere.test`,
          subject: `Order ${k}`,
          text: 'Thanks',
        });
      }

      // The webhooks: distinct ones, then redeliveries and resends, shuffled.
      const created = new Date().toISOString();
      const inbound = (k: number): string =>
        JSON.stringify({
          type: 'email.received',
          created_at: created,
          data: {
            email_id: `in-${k}`,
            from: `Sender ${k} <sender${k}@elsewhere.test>`,
            to: [`box${k % ACCOUNTS}@mp.test`],
            cc: [],
            subject: `Question number ${k}`,
            message_id: `<in-${k}@elsewhere.test>`,
            text: `Body ${k}`,
            attachments: [],
          },
        });
      const eventType = (k: number) => EVENT_TYPES[k % EVENT_TYPES.length]!;
      const event = (k: number): string =>
        JSON.stringify({
          type: `email.${eventType(k)}`,
          created_at: new Date(Date.parse(created) + k).toISOString(),
          data: {
            email_id: `out-${k % OUTBOUND}`,
            from: 'box@mp.test',
            to: ['x@elsewhere.test'],
            subject: 'Order',
          },
        });
      const distinct: Webhook[] = [
        ...Array.from({ length: INBOUND }, (_, k) => ({
          id: `msg_in_${k}`,
          path: k % 2 ? '/inbox/webhook/inbound' : '/inbox/webhook',
          body: inbound(k),
          kind: 'inbound' as const,
        })),
        ...Array.from({ length: EVENTS }, (_, k) => ({
          id: `msg_ev_${k}`,
          path: k % 2 ? '/inbox/webhook/events' : '/inbox/webhook',
          body: event(k),
          kind: 'event' as const,
        })),
      ];
      const resent = Array.from({ length: INBOUND_RESENT }, (_, k) => ({
        id: `msg_resent_${k}`,
        path: '/inbox/webhook/inbound',
        body: inbound(k * 7),
        kind: 'inbound' as const,
      }));
      const redelivered = [
        ...Array.from({ length: INBOUND_REDELIVERED }, (_, k) => distinct[(k * 3) % INBOUND]!),
        ...Array.from({ length: EVENTS_REDELIVERED }, (_, k) => distinct[INBOUND + ((k * 3) % EVENTS)]!),
      ];
      const posts = [...distinct, ...resent, ...redelivered];
      expect(posts).toHaveLength(1000);
      for (let i = posts.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [posts[i], posts[j]] = [posts[j]!, posts[i]!];
      }

      phase('seeded');
      // Post across both apps, 16 at a time; kill a worker with SIGKILL 40% of the way in.
      const acked = new Map<string, string>(); // webhook-id -> outboxEventId
      const started = Date.now();
      let next = 0;
      let killed = false;
      const post = async (w: Webhook, n: number) => {
        const headers = standardWebhookHeaders({
          secret: TEST_WEBHOOK_SECRET,
          body: w.body,
          timestamp: Math.floor(Date.now() / 1000),
          id: w.id,
        });
        const res = await fetch(urls[n % 2]! + w.path, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: w.body,
        });
        const answer = (await res.json()) as { accepted?: boolean; outboxEventId?: string };
        expect(res.status, JSON.stringify(answer)).toBe(202);
        const prior = acked.get(w.id);
        if (prior !== undefined) expect(answer.outboxEventId).toBe(prior);
        acked.set(w.id, answer.outboxEventId!);
      };
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < posts.length) {
            const n = next++;
            if (!killed && n >= posts.length * 0.4) {
              killed = true;
              workers[0]!.kill('SIGKILL');
            }
            await post(posts[n]!, n);
          }
        }),
      );
      phase('posted');
      expect(killed).toBe(true);
      expect(acked.size).toBe(INBOUND + EVENTS + INBOUND_RESENT);

      // The two surviving workers finish everything, the killed worker's claims included.
      const q = async <T>(sql: string, values: unknown[] = []) => (await pool.query(sql, values)).rows as T[];
      try {
        await waitUntil(
          'the outbox to drain',
          async () =>
            (
              await q<{ n: number }>(
                `SELECT count(*)::int AS n FROM postern.outbox_events WHERE status <> 'done'`,
              )
            )[0]!.n === 0,
          90_000,
        );
      } catch (e) {
        const left = await q(
          `SELECT status, name, attempts, locked_by IS NOT NULL AS leased, left(last_error, 200) AS err, count(*)::int AS n
         FROM postern.outbox_events WHERE status <> 'done' GROUP BY 1, 2, 3, 4, 5`,
        );
        const logs = children.map((c) => (c as ChildProcess & { tail: string[] }).tail.join('').slice(-6000));
        throw new Error(`${(e as Error).message}: ${JSON.stringify(left)}\n${logs.join('\n---\n')}`);
      }
      const drainedMs = Date.now() - started;
      phase('drained');
      console.info(`multi-process: ${phases.join(', ')}`);

      // Every acknowledged webhook is one finished outbox event.
      const events = await q<{ id: string; outcome: string | null }>(
        'SELECT id, outcome FROM postern.outbox_events',
      );
      expect(new Set(events.map((e) => e.id))).toEqual(new Set(acked.values()));

      // Inbound: one message per distinct mail; a resend of a stored mail adds nothing.
      const inboundRows = await q<{ provider_message_id: string; thread_id: string }>(
        `SELECT provider_message_id, thread_id FROM postern.inbox_messages WHERE direction = 'inbound'`,
      );
      expect(inboundRows).toHaveLength(INBOUND);
      expect(new Set(inboundRows.map((r) => r.provider_message_id)).size).toBe(INBOUND);
      // Threads: each distinct subject opened one; every thread counts exactly its messages.
      expect(new Set(inboundRows.map((r) => r.thread_id)).size).toBe(INBOUND);
      const badCounts = await q(
        `SELECT t.id FROM postern.inbox_threads t
       WHERE t.message_count <> (SELECT count(*) FROM postern.inbox_messages m WHERE m.thread_id = t.id)`,
      );
      expect(badCounts).toEqual([]);
      expect(await q('SELECT id FROM postern.inbox_messages WHERE processed_at IS NULL')).toEqual([]);

      // Notifications: each member of the account once per message.
      const done = await q<{ n: number }>(
        'SELECT count(*)::int AS n FROM postern.inbox_notifications WHERE completed_at IS NOT NULL',
      );
      expect(done[0]!.n).toBe(INBOUND * 2);
      const notices = mail.mails.filter((m) => m.subject.startsWith('New message in'));
      const distinctNotices = new Set(notices.map((m) => String(m.headers.get('x-postern-notification'))));
      expect(distinctNotices.size).toBe(INBOUND * 2);
      // A worker killed between sending a mail and recording it may have sent one twice
      // (at-least-once; the header lets a mail system drop it): at most its in-flight share.
      expect(notices.length - distinctNotices.size).toBeLessThanOrEqual(4);

      // Delivery events: one mail_event each, all applied; statuses and counters exact.
      const mailEvents = await q<{ n: number; unapplied: number }>(
        'SELECT count(*)::int AS n, count(*) FILTER (WHERE applied_at IS NULL)::int AS unapplied FROM postern.mail_events',
      );
      expect(mailEvents[0]).toEqual({ n: EVENTS, unapplied: 0 });
      const outbound = await q<{
        provider_message_id: string;
        status: string;
        open_count: number;
        click_count: number;
      }>(
        `SELECT provider_message_id, status, open_count, click_count FROM postern.inbox_messages WHERE direction = 'outbound'`,
      );
      expect(outbound).toHaveLength(OUTBOUND);
      for (const m of outbound) {
        const k = Number(m.provider_message_id.slice(4));
        const mine = Array.from({ length: EVENTS }, (_, e) => e)
          .filter((e) => e % OUTBOUND === k)
          .map(eventType);
        let status: keyof typeof STATUS_RANK = 'queued';
        for (const type of mine) {
          const s = STATUS_OF[type];
          if (s && STATUS_RANK[s] > STATUS_RANK[status]) status = s;
        }
        expect(m, m.provider_message_id).toEqual({
          provider_message_id: m.provider_message_id,
          status,
          open_count: mine.filter((x) => x === 'opened').length,
          click_count: mine.filter((x) => x === 'clicked').length,
        });
      }
      expect(drainedMs).toBeLessThan(100_000);
      await ph.close();
    }, 150_000);
  },
);
