-- Postern on Postgres, part 9: threads and messages of one millisecond are listed in arrival
-- order. A thread's `activity` ranks it among the account's threads whose newest messages share
-- a millisecond (0 for every existing thread: their order, by id, is unchanged); messages
-- break such ties on their identity column. New indexes are built before the old ones go, so
-- the tables stay readable while they build.
ALTER TABLE inbox_threads ADD COLUMN activity integer NOT NULL DEFAULT 0;
CREATE INDEX inbox_threads_by_activity ON inbox_threads (account_id, last_message_at DESC, activity DESC, id DESC)
  WHERE message_count > 0;
DROP INDEX inbox_threads_list;
CREATE INDEX inbox_messages_by_arrival ON inbox_messages (thread_id, created_at, seq);
DROP INDEX inbox_messages_thread;
