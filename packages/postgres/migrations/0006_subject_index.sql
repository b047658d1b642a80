-- Gatehouse on Postgres, part 6: the threading index keys subjects by md5. A btree row holds at
-- most 2,704 bytes, and a normalized subject (up to 998 characters) passes that in CJK, where a
-- character is 3 bytes: such a message could not be stored at all, and its event went dead.
DROP INDEX inbox_messages_subject;
CREATE INDEX inbox_messages_subject ON inbox_messages (account_id, md5(subject_key), created_at DESC);
