import { randomUUID } from 'node:crypto';
import type { InboxAttachment, InboxMessage, InboxThread, MailEvent, Stores } from '@postern/core/ports';
import { describe, expect, it } from 'vitest';
import type { StoreSetup } from './setup.js';

const id = () => randomUUID();
const MIN = 60_000;

async function account(stores: Stores, now: Date, owner = id()) {
  const a = await stores.inboxAccounts.create(
    { id: id(), address: `${id()}@inbox.test`, name: 'Support', createdAt: now },
    owner,
  );
  return { account: a!, owner };
}

async function thread(stores: Stores, accountId: string, at: Date, over: Partial<InboxThread> = {}) {
  const t: InboxThread = {
    id: id(),
    accountId,
    subject: 'Hello',
    subjectKey: 'hello',
    createdAt: at,
    lastMessageAt: at,
    activity: 0,
    messageCount: 0,
    ...over,
  };
  await stores.inboxThreads.create(t);
  return t;
}

function message(
  accountId: string,
  threadId: string,
  at: Date,
  over: Partial<InboxMessage> = {},
): InboxMessage {
  return {
    id: id(),
    accountId,
    threadId,
    direction: 'outbound',
    providerMessageId: id(),
    messageId: null,
    inReplyTo: [],
    references: [],
    from: 'support@inbox.test',
    fromAddress: 'support@inbox.test',
    replyTo: null,
    to: ['ann@customer.test'],
    cc: [],
    recipients: ['ann@customer.test'],
    subject: 'Hello',
    subjectKey: 'hello',
    text: 'hi',
    html: null,
    status: 'queued',
    openedAt: null,
    openCount: 0,
    clickedAt: null,
    clickCount: 0,
    threadKeys: [],
    createdAt: at,
    processedAt: null,
    ...over,
  };
}

function mailEvent(providerMessageId: string | null, at: Date, over: Partial<MailEvent> = {}): MailEvent {
  return {
    id: id(),
    type: 'email.delivered',
    kind: 'status',
    status: 'delivered',
    providerMessageId,
    occurredAt: at,
    recordedAt: at,
    detail: null,
    appliedAt: null,
    ...over,
  };
}

/** Storage-port contract of the inbox area (accounts, threads, messages, delivery events). */
export function inboxStoreContract(setup: StoreSetup): void {
  describe('inbox accounts', () => {
    it('create makes the caller owner and refuses a taken address, also under a race', async () => {
      const { stores, clock } = await setup();
      const now = clock.now();
      const address = `${id()}@inbox.test`;
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          stores.inboxAccounts.create({ id: id(), address, name: 'A', createdAt: now }, id()),
        ),
      );
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      const found = await stores.inboxAccounts.findByAddress(address);
      expect(found).toEqual(winners[0]);
      expect(await stores.inboxAccounts.findById(found!.id)).toEqual(found);
      expect(await stores.inboxAccounts.findByAddress(`nobody-${address}`)).toBeNull();
      expect(await stores.inboxAccounts.findById(id())).toBeNull();
    });

    it('lists a user’s accounts with their role, and memberships with roles', async () => {
      const { stores, clock } = await setup();
      const { account: a, owner } = await account(stores, clock.now());
      clock.advance(1000);
      const { account: b, owner: bOwner } = await account(stores, clock.now());
      expect(await stores.inboxAccounts.roleOf(a.id, owner)).toBe('owner');
      const added = await stores.inboxAccounts.setMember(b.id, owner, 'member', clock.now(), bOwner);
      expect(added).toMatchObject({
        created: true,
        membership: { accountId: b.id, userId: owner, role: 'member', addedBy: bOwner },
      });
      expect(await stores.inboxAccounts.listForUser(owner)).toEqual([
        { account: a, role: 'owner', addedBy: null },
        { account: b, role: 'member', addedBy: bOwner },
      ]);
      expect(await stores.inboxAccounts.membershipOf(a.id, owner)).toMatchObject({
        accountId: a.id,
        userId: owner,
        role: 'owner',
        addedBy: null,
      });
      expect(await stores.inboxAccounts.membershipOf(b.id, owner)).toMatchObject({ addedBy: bOwner });
      expect(await stores.inboxAccounts.membershipOf(b.id, id())).toBeNull();
      expect(await stores.inboxAccounts.roleOf(b.id, id())).toBeNull();
      expect((await stores.inboxAccounts.listMembers(b.id)).map((m) => m.role).sort()).toEqual([
        'member',
        'owner',
      ]);
      expect(await stores.inboxAccounts.listForUser(id())).toEqual([]);
    });

    it('setMember changes roles but never demotes the only owner', async () => {
      const { stores, clock } = await setup();
      const { account: a, owner } = await account(stores, clock.now());
      expect(await stores.inboxAccounts.setMember(a.id, owner, 'member', clock.now(), owner)).toBe(
        'last_owner',
      );
      expect(await stores.inboxAccounts.roleOf(a.id, owner)).toBe('owner');
      const other = id();
      await stores.inboxAccounts.setMember(a.id, other, 'owner', clock.now(), owner);
      const changed = await stores.inboxAccounts.setMember(a.id, owner, 'member', clock.now(), other);
      // A role change keeps who added the member: the creator stays the creator.
      expect(changed).toMatchObject({ created: false, membership: { role: 'member', addedBy: null } });
      expect(await stores.inboxAccounts.setMember(a.id, other, 'member', clock.now(), other)).toBe(
        'last_owner',
      );
    });

    it('dropGrantsOf empties the accounts a user created (making it their owner again) and drops what it added elsewhere', async () => {
      const { stores, clock } = await setup();
      const now = clock.now();
      const { account: made, owner: user } = await account(stores, now);
      const helper = id();
      const helpersFriend = id();
      await stores.inboxAccounts.setMember(made.id, helper, 'owner', now, user);
      await stores.inboxAccounts.setMember(made.id, helpersFriend, 'member', now, helper);
      await stores.inboxAccounts.setMember(made.id, user, 'member', now, helper); // demoted by the helper
      // Someone else's account, where the user was added and added another.
      const { account: theirs, owner: theirOwner } = await account(stores, now);
      await stores.inboxAccounts.setMember(theirs.id, user, 'owner', now, theirOwner);
      const guest = id();
      await stores.inboxAccounts.setMember(theirs.id, guest, 'member', now, user);
      const kept = id();
      await stores.inboxAccounts.setMember(theirs.id, kept, 'member', now, theirOwner);
      // An account the user has nothing to do with.
      const { account: other, owner: otherOwner } = await account(stores, now);
      await stores.inboxAccounts.setMember(other.id, helper, 'member', now, otherOwner);

      expect(await stores.inboxAccounts.dropGrantsOf(user)).toBe(3);
      expect(await stores.inboxAccounts.listMembers(made.id)).toEqual([
        expect.objectContaining({ userId: user, role: 'owner', addedBy: null }),
      ]);
      expect((await stores.inboxAccounts.listMembers(theirs.id)).map((m) => m.userId).sort()).toEqual(
        [theirOwner, user, kept].sort(),
      );
      expect((await stores.inboxAccounts.listMembers(other.id)).map((m) => m.userId).sort()).toEqual(
        [otherOwner, helper].sort(),
      );
      expect(await stores.inboxAccounts.dropGrantsOf(user)).toBe(0);
    });
  });

  describe('inbox threads', () => {
    it('lists non-empty threads newest first, paged strictly after a cursor', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const made: InboxThread[] = [];
      for (let i = 0; i < 5; i++) {
        const t = await thread(stores, a.id, clock.now(), { subject: `T${i}` });
        await stores.inboxThreads.touch(t.id, clock.now());
        made.push(t);
        clock.advance(1000);
      }
      // Threads whose newest messages share a millisecond: the latest arrival first, whatever
      // the ids, and a thread that gets another message of that millisecond moves ahead.
      const tieAt = clock.now();
      const ties = [
        await thread(stores, a.id, tieAt),
        await thread(stores, a.id, tieAt),
        await thread(stores, a.id, tieAt),
      ];
      for (const t of ties) await stores.inboxThreads.touch(t.id, tieAt);
      await stores.inboxThreads.touch(ties[0]!.id, tieAt);
      await thread(stores, a.id, clock.now(), { subject: 'empty' });

      const all = await stores.inboxThreads.listByAccount(a.id, { limit: 100 });
      expect(all.map((t) => t.id)).toEqual([
        ties[0]!.id,
        ties[2]!.id,
        ties[1]!.id,
        ...made.map((t) => t.id).reverse(),
      ]);

      for (const size of [1, 2, 3]) {
        const pages: InboxThread[] = [];
        for (;;) {
          const last = pages.at(-1);
          const page = await stores.inboxThreads.listByAccount(a.id, {
            ...(last
              ? { after: { lastMessageAt: last.lastMessageAt, activity: last.activity, id: last.id } }
              : {}),
            limit: size,
          });
          if (page.length === 0) break;
          pages.push(...page);
        }
        expect(pages.map((t) => t.id)).toEqual(all.map((t) => t.id));
      }

      // The cursor's own thread gets a newer message between two pages: the next page goes on
      // from where the cursor stood, skipping nothing.
      const first = await stores.inboxThreads.listByAccount(a.id, { limit: 2 });
      const at = first.at(-1)!;
      await stores.inboxThreads.touch(at.id, new Date(clock.now().getTime() + MIN));
      const rest = await stores.inboxThreads.listByAccount(a.id, {
        after: { lastMessageAt: at.lastMessageAt, activity: at.activity, id: at.id },
        limit: 100,
      });
      expect(rest.map((t) => t.id)).toEqual(all.slice(2).map((t) => t.id));
    });

    it('touch counts messages and keeps the latest time; deleteIfEmpty spares threads with messages', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      const later = new Date(clock.now().getTime() + MIN);
      await Promise.all([
        stores.inboxThreads.touch(t.id, later),
        stores.inboxThreads.touch(t.id, clock.now()),
        stores.inboxThreads.touch(t.id, clock.now()),
      ]);
      expect(await stores.inboxThreads.findById(t.id)).toMatchObject({
        messageCount: 3,
        lastMessageAt: later,
      });
      await stores.inboxThreads.deleteIfEmpty(t.id);
      expect(await stores.inboxThreads.findById(t.id)).not.toBeNull();
      const empty = await thread(stores, a.id, clock.now());
      await stores.inboxThreads.deleteIfEmpty(empty.id);
      expect(await stores.inboxThreads.findById(empty.id)).toBeNull();
    });
  });

  describe('inbox messages', () => {
    it('provider_message_id is unique per account: of racing inserts exactly one is created', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const { account: b } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      const providerMessageId = id();
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          stores.inboxMessages.insert(message(a.id, t.id, clock.now(), { providerMessageId })),
        ),
      );
      const created = results.filter((r) => r.created);
      expect(created).toHaveLength(1);
      for (const r of results) expect(r.message.id).toBe(created[0]!.message.id);
      expect(await stores.inboxMessages.findByProviderId(a.id, providerMessageId)).toEqual(
        created[0]!.message,
      );

      const tb = await thread(stores, b.id, clock.now());
      const other = await stores.inboxMessages.insert(
        message(b.id, tb.id, clock.now(), { providerMessageId }),
      );
      expect(other.created).toBe(true);
      expect((await stores.inboxMessages.listOutboundByProviderId(providerMessageId)).length).toBe(2);
      expect(await stores.inboxMessages.findByProviderId(a.id, id())).toBeNull();
    });

    it('orders messages of one millisecond by arrival, in the list and for "newest"', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      const at = clock.now();
      // Ids in reverse of arrival, so an id tie-break would show up.
      const ids = ['m-c', 'm-b', 'm-a'].map((x) => `${x}-${id()}`);
      for (const mid of ids)
        await stores.inboxMessages.insert(
          message(a.id, t.id, at, { id: mid, threadKeys: ['same-key'], subjectKey: 'tied' }),
        );
      expect((await stores.inboxMessages.listByThread(t.id)).map((m) => m.id)).toEqual(ids);
      expect((await stores.inboxMessages.findOutboundByThreadKeys(a.id, ['same-key']))?.id).toBe(ids[2]);
      expect((await stores.inboxMessages.findLatestBySubject(a.id, 'tied', at))?.id).toBe(ids[2]);
    });

    it('round-trips every field and lists a thread oldest first', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      const first = message(a.id, t.id, clock.now(), {
        direction: 'inbound',
        status: 'received',
        messageId: 'm1@x.test',
        inReplyTo: ['a@x'],
        references: ['a@x', 'b@y'],
        replyTo: 'r@x.test',
        cc: ['Cc <cc@x.test>'],
        html: '<p>hi</p>',
        threadKeys: ['m1@x.test'],
        processedAt: clock.now(),
      });
      clock.advance(1000);
      const second = message(a.id, t.id, clock.now());
      await stores.inboxMessages.insert(second);
      await stores.inboxMessages.insert(first);
      expect(await stores.inboxMessages.findById(first.id)).toEqual(first);
      expect((await stores.inboxMessages.listByThread(t.id)).map((m) => m.id)).toEqual([first.id, second.id]);
      expect(await stores.inboxMessages.findById(id())).toBeNull();
      await stores.inboxMessages.markProcessed(second.id, clock.now());
      expect((await stores.inboxMessages.findById(second.id))?.processedAt).toEqual(clock.now());
    });

    it('finds the newest outbound message of the account by thread keys', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const { account: b } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      const old = message(a.id, t.id, clock.now(), { threadKeys: ['k1', 'shared'] });
      clock.advance(1000);
      const newer = message(a.id, t.id, clock.now(), { threadKeys: ['k2', 'shared'] });
      const inbound = message(a.id, t.id, clock.now(), { direction: 'inbound', threadKeys: ['k3'] });
      const elsewhere = message(b.id, t.id, clock.now(), { threadKeys: ['k4'] });
      for (const m of [old, newer, inbound, elsewhere]) await stores.inboxMessages.insert(m);
      expect((await stores.inboxMessages.findOutboundByThreadKeys(a.id, ['x', 'k1']))?.id).toBe(old.id);
      expect((await stores.inboxMessages.findOutboundByThreadKeys(a.id, ['shared']))?.id).toBe(newer.id);
      expect(await stores.inboxMessages.findOutboundByThreadKeys(a.id, ['k3'])).toBeNull();
      expect(await stores.inboxMessages.findOutboundByThreadKeys(a.id, ['k4'])).toBeNull();
      expect(await stores.inboxMessages.findOutboundByThreadKeys(a.id, [])).toBeNull();
    });

    it('finds the newest message by subject within the window, optionally outbound to a recipient', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const t1 = await thread(stores, a.id, clock.now());
      const t2 = await thread(stores, a.id, clock.now());
      const start = clock.now();
      const toAnn = message(a.id, t1.id, clock.now(), { subjectKey: 'invoice', recipients: ['ann@x.test'] });
      clock.advance(MIN);
      const toBob = message(a.id, t2.id, clock.now(), { subjectKey: 'invoice', recipients: ['bob@x.test'] });
      for (const m of [toAnn, toBob]) await stores.inboxMessages.insert(m);
      const find = stores.inboxMessages.findLatestBySubject.bind(stores.inboxMessages);
      expect((await find(a.id, 'invoice', start))?.id).toBe(toBob.id);
      expect((await find(a.id, 'invoice', start, { outboundTo: 'ann@x.test' }))?.id).toBe(toAnn.id);
      expect(
        await find(a.id, 'invoice', new Date(start.getTime() + 1), { outboundTo: 'ann@x.test' }),
      ).toBeNull();
      expect(await find(a.id, 'other', start)).toBeNull();
    });

    it('stores and finds a message whose subject is 998 CJK characters (3,000 bytes)', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      // Varied characters: a repeated pair would compress below the index row limit.
      const long = Array.from({ length: 998 }, (_, i) =>
        String.fromCodePoint(0x4e00 + ((i * 7919) % 20000)),
      ).join('');
      const start = clock.now();
      const m = message(a.id, t.id, clock.now(), { subject: long, subjectKey: long });
      await stores.inboxMessages.insert(m);
      expect((await stores.inboxMessages.findLatestBySubject(a.id, long, start))?.id).toBe(m.id);
      expect(await stores.inboxMessages.findLatestBySubject(a.id, `${long.slice(0, -1)}x`, start)).toBeNull();
    });

    it('applyDelivery moves status forward only and counts engagement atomically', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const t = await thread(stores, a.id, clock.now());
      const m = message(a.id, t.id, clock.now());
      await stores.inboxMessages.insert(m);
      const at = clock.now();
      const apply = (u: Parameters<Stores['inboxMessages']['applyDelivery']>[1]) =>
        stores.inboxMessages.applyDelivery(m.id, u);
      expect((await apply({ kind: 'status', status: 'delivered', at }))?.status).toBe('delivered');
      expect((await apply({ kind: 'status', status: 'sent', at }))?.status).toBe('delivered');
      expect((await apply({ kind: 'status', status: 'delayed', at }))?.status).toBe('delivered');
      expect((await apply({ kind: 'status', status: 'complained', at }))?.status).toBe('complained');
      expect((await apply({ kind: 'status', status: 'bounced', at }))?.status).toBe('complained');
      const early = new Date(at.getTime() - MIN);
      await Promise.all([
        ...Array.from({ length: 5 }, () => apply({ kind: 'opened', at })),
        apply({ kind: 'opened', at: early }),
        ...Array.from({ length: 3 }, () => apply({ kind: 'clicked', at })),
      ]);
      expect(await stores.inboxMessages.findById(m.id)).toMatchObject({
        status: 'complained',
        openCount: 6,
        openedAt: early,
        clickCount: 3,
        clickedAt: at,
      });
      expect(await stores.inboxMessages.applyDelivery(id(), { kind: 'opened', at })).toBeNull();
    });
  });

  describe('inbox attachments', () => {
    it('stores one row per (message, source), also when inserts race', async () => {
      const { stores, clock } = await setup();
      const { account: a } = await account(stores, clock.now());
      const messageId = id();
      const row = (sourceKey: string): InboxAttachment => ({
        id: id(),
        accountId: a.id,
        messageId,
        sourceKey,
        filename: 'a.txt',
        contentType: 'text/plain',
        size: 1,
        contentId: null,
        inline: false,
        fileKey: id(),
        createdAt: clock.now(),
      });
      const results = await Promise.all(
        Array.from({ length: 6 }, () => stores.inboxAttachments.insert(row('p:1'))),
      );
      expect(new Set(results.map((r) => r.id)).size).toBe(1);
      await stores.inboxAttachments.insert(row('p:2'));
      expect(await stores.inboxAttachments.findBySource(messageId, 'p:1')).toEqual(results[0]);
      expect(await stores.inboxAttachments.findById(results[0]!.id)).toEqual(results[0]);
      expect(
        (await stores.inboxAttachments.listByMessages([messageId, id()])).map((x) => x.sourceKey).sort(),
      ).toEqual(['p:1', 'p:2']);
      expect(await stores.inboxAttachments.findBySource(messageId, 'p:3')).toBeNull();
    });
  });

  describe('mail events', () => {
    it('records each event id once, lists pending oldest first, and applies exactly once', async () => {
      const { stores, clock } = await setup();
      const pid = id();
      const later = mailEvent(pid, clock.now());
      const earlier = mailEvent(pid, new Date(clock.now().getTime() - MIN), { kind: 'opened', status: null });
      expect((await stores.mailEvents.record(later)).created).toBe(true);
      const again = await stores.mailEvents.record({ ...later, type: 'email.bounced' });
      expect(again).toEqual({ event: later, created: false });
      await stores.mailEvents.record(earlier);
      await stores.mailEvents.record(mailEvent(pid, clock.now(), { appliedAt: clock.now() }));
      expect((await stores.mailEvents.listPending(pid)).map((e) => e.id)).toEqual([earlier.id, later.id]);

      const marks = await Promise.all(
        Array.from({ length: 5 }, () => stores.mailEvents.markApplied(later.id, clock.now())),
      );
      expect(marks.filter(Boolean)).toHaveLength(1);
      expect((await stores.mailEvents.findById(later.id))?.appliedAt).toEqual(clock.now());
      expect((await stores.mailEvents.listPending(pid)).map((e) => e.id)).toEqual([earlier.id]);
      expect(await stores.mailEvents.markApplied(id(), clock.now())).toBe(false);
      expect(await stores.mailEvents.findById(id())).toBeNull();
    });

    it('keeps an event that names no message', async () => {
      const { stores, clock } = await setup();
      const orphan = mailEvent(null, clock.now(), { appliedAt: clock.now() });
      expect((await stores.mailEvents.record(orphan)).created).toBe(true);
      expect(await stores.mailEvents.findById(orphan.id)).toEqual(orphan);
    });

    it('purges events past their retention: waiting ones by one cut-off, applied ones by another', async () => {
      const { stores, clock } = await setup();
      const DAY = 86_400_000;
      const ago = (days: number) => new Date(clock.now().getTime() - days * DAY);
      const waitingOld = mailEvent(id(), ago(8));
      const waitingNew = mailEvent(id(), ago(6));
      const appliedMid = mailEvent(id(), ago(30), { appliedAt: ago(30) });
      const appliedOld = mailEvent(id(), ago(91), { appliedAt: ago(91) });
      const orphanOld = mailEvent(null, ago(91), { appliedAt: ago(91) });
      for (const e of [waitingOld, waitingNew, appliedMid, appliedOld, orphanOld])
        await stores.mailEvents.record(e);
      // An event applied late counts by when it was recorded.
      const appliedLate = mailEvent(id(), ago(100));
      await stores.mailEvents.record(appliedLate);
      await stores.mailEvents.markApplied(appliedLate.id, ago(1));
      const cut = { unmatchedBefore: ago(7), appliedBefore: ago(90) };
      expect(await stores.mailEvents.purge(cut)).toBeGreaterThanOrEqual(4);
      for (const e of [waitingOld, appliedOld, orphanOld, appliedLate])
        expect(await stores.mailEvents.findById(e.id)).toBeNull();
      for (const e of [waitingNew, appliedMid]) expect(await stores.mailEvents.findById(e.id)).not.toBeNull();
      expect((await stores.mailEvents.listPending(waitingNew.providerMessageId!)).map((e) => e.id)).toEqual([
        waitingNew.id,
      ]);
    });

    it('purges at most `limit` events per call, so a backlog goes in short batches', async () => {
      const { stores, clock } = await setup();
      const old = new Date(clock.now().getTime() - 1000);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const e = mailEvent(id(), old, i % 2 ? { appliedAt: old } : {});
        ids.push(e.id);
        await stores.mailEvents.record(e);
      }
      const cut = { unmatchedBefore: clock.now(), appliedBefore: clock.now() };
      expect(await stores.mailEvents.purge(cut, 2)).toBe(2);
      expect(await stores.mailEvents.purge(cut, 2)).toBe(2);
      expect(await stores.mailEvents.purge(cut, 2)).toBeLessThan(2);
      for (const i of ids) expect(await stores.mailEvents.findById(i)).toBeNull();
      expect(await stores.mailEvents.purge(cut, 2)).toBe(0);
    });
  });

  describe('inbox notifications', () => {
    it('claims a key once, frees it on release, never after complete, again after the lease', async () => {
      const { stores, clock } = await setup();
      const key = `${id()}:${id()}`;
      const lease = () => new Date(clock.now().getTime() + 5 * MIN);
      const claim = (holder: string) => stores.inboxNotifications.claim(key, clock.now(), lease(), holder);
      const claims = await Promise.all(['e1', 'e2', 'e3', 'e4', 'e5'].map(claim));
      const winner = ['e1', 'e2', 'e3', 'e4', 'e5'][claims.indexOf('claimed')];
      expect(claims.filter((c) => c === 'claimed')).toHaveLength(1);
      // The others learn who holds it (a redelivery of the holding event must wait for it).
      expect(claims.filter((c) => c !== 'claimed')).toEqual(Array(4).fill({ heldBy: winner }));
      await stores.inboxNotifications.release(key);
      expect(await claim('e2')).toBe('claimed');
      clock.advance(4 * MIN);
      expect(await claim('e2')).toEqual({ heldBy: 'e2' });
      clock.advance(2 * MIN);
      expect(await claim('e3')).toBe('claimed');
      await stores.inboxNotifications.complete(key, clock.now());
      await stores.inboxNotifications.release(key);
      expect(await claim('e4')).toBe('completed');
      clock.advance(60 * MIN);
      expect(await claim('e4')).toBe('completed');
    });
  });
}
