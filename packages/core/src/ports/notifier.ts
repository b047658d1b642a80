/** What an owner/member is told about a new inbound message. `from` and `subject` come from a
 *  stranger: a notifier strips CR/LF before putting them in any header. */
export interface InboxNotice {
  userId: string;
  email: string;
  accountId: string;
  accountName: string;
  accountAddress: string;
  threadId: string;
  /** Postern's id of the inbox message. */
  messageId: string;
  from: string;
  subject: string;
}

/** Tells account owners/members about new mail. Called once per (message, user) after the
 *  message is committed; a retry after a failure passes the same `idempotencyKey`
 *  (`${messageId}:${userId}`), so a notifier that keeps keys never sends twice. Throw to retry. */
export interface Notifier {
  notify(notice: InboxNotice, idempotencyKey: string): Promise<void>;
}
