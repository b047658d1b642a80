import type { InboxMessageStore } from '../ports/inbox-message-store.js';
import { threadKeys } from './message-ids.js';

export type ThreadMatch = { threadId: string; strategy: 'references' | 'subject_and_sender' | 'subject' };

/** The threading waterfall (docs/inbox.md); the first strategy that finds a thread wins.
 *  1. `In-Reply-To`/`References` ids against both ids of prior outbound messages;
 *  2. normalized subject + the sender was a recipient of a prior outbound message;
 *  3. normalized subject alone.
 *  2 and 3 look back `windowMs` only and never match an empty subject. */
export async function findThread(
  messages: InboxMessageStore,
  input: {
    accountId: string;
    inReplyTo: string[];
    references: string[];
    subjectKey: string;
    sender: string | null;
    now: Date;
    windowMs: number;
  },
): Promise<ThreadMatch | null> {
  const keys = threadKeys([...input.inReplyTo, ...input.references]);
  if (keys.length > 0) {
    const hit = await messages.findOutboundByThreadKeys(input.accountId, keys);
    if (hit) return { threadId: hit.threadId, strategy: 'references' };
  }
  if (input.subjectKey === '') return null;
  const since = new Date(input.now.getTime() - input.windowMs);
  if (input.sender) {
    const hit = await messages.findLatestBySubject(input.accountId, input.subjectKey, since, {
      outboundTo: input.sender,
    });
    if (hit) return { threadId: hit.threadId, strategy: 'subject_and_sender' };
  }
  const hit = await messages.findLatestBySubject(input.accountId, input.subjectKey, since);
  return hit ? { threadId: hit.threadId, strategy: 'subject' } : null;
}
