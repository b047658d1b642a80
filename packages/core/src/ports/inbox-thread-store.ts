/** A conversation in one inbox account. */
export interface InboxThread {
  id: string;
  accountId: string;
  /** Subject of the first message, as received. */
  subject: string;
  /** Normalized subject (see `normalizeSubject`), for matching. */
  subjectKey: string;
  createdAt: Date;
  /** Time of the newest message; the list order. */
  lastMessageAt: Date;
  /** Store-assigned (0 on `create`): orders the account's threads whose newest messages share
   *  a `lastMessageAt` (one millisecond, or a stopped test clock) by arrival. Every `touch`
   *  that brings a message at least as new as `lastMessageAt` sets it above that of every
   *  other thread of the account with the same `lastMessageAt`. Counted per account and
   *  millisecond, so a page cursor tells nothing about other accounts' traffic. */
  activity: number;
  messageCount: number;
}

/** Position in a thread list: the last thread of the previous page. */
export interface ThreadCursor {
  lastMessageAt: Date;
  activity: number;
  id: string;
}

export interface InboxThreadStore {
  /** Inserts a new thread (`id` is fresh; `messageCount` 0; `activity` starts at 0). */
  create(thread: Omit<InboxThread, 'activity'>): Promise<void>;
  findById(id: string): Promise<InboxThread | null>;
  /** The account's threads newest first, ordered by (`lastMessageAt` desc, `activity` desc,
   *  `id` desc: two touches racing in one millisecond may share an `activity`); with
   *  `after`, only threads strictly after that position in this order. At most `limit`.
   *  Threads without messages are never listed. */
  listByAccount(accountId: string, opts: { after?: ThreadCursor; limit: number }): Promise<InboxThread[]>;
  /** Counts one more message: atomically `messageCount + 1` and
   *  `lastMessageAt = max(lastMessageAt, at)`, and a new highest `activity` when `at` is not
   *  older than `lastMessageAt`. */
  touch(id: string, at: Date): Promise<void>;
  /** Called inside `stores.transaction` before threading a new inbound mail: holds until the
   *  transaction ends, so two mails with one normalized subject in one account are threaded one
   *  after the other (the second sees the first's thread) across processes. Stores that run in
   *  one process only may do nothing: the consumer already serialises them in-process. */
  lockSubject(accountId: string, subjectKey: string): Promise<void>;
  /** Deletes the thread only if it holds no message (a thread left behind when a message
   *  insert lost a race in a store without rollback). Atomic check and delete. */
  deleteIfEmpty(id: string): Promise<void>;
}
