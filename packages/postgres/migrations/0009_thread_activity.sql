-- Gatehouse on Postgres, part 9: threads and messages of one millisecond are listed in arrival
-- order. A thread records the arrival order of its newest message (`activity`, from a sequence)
-- and the list is keyset-paginated on (last_message_at, activity); messages break ties on
-- their identity column. Until now ties fell to random ids.
CREATE SEQUENCE inbox_thread_activity;
ALTER TABLE inbox_threads ADD COLUMN activity bigint NOT NULL DEFAULT 0;
-- Existing threads keep the order they were listed in.
UPDATE inbox_threads SET activity = o.n
  FROM (SELECT id, nextval('inbox_thread_activity') AS n
          FROM (SELECT id FROM inbox_threads ORDER BY last_message_at, id) ordered) o
 WHERE inbox_threads.id = o.id;
DROP INDEX inbox_threads_list;
CREATE INDEX inbox_threads_list ON inbox_threads (account_id, last_message_at DESC, activity DESC)
  WHERE message_count > 0;
DROP INDEX inbox_messages_thread;
CREATE INDEX inbox_messages_thread ON inbox_messages (thread_id, created_at, seq);
