-- Postern on Postgres, part 6: the threading index keys subjects by md5. A btree row holds at
-- most 2,704 bytes, and a normalized subject (up to 998 characters) passes that in CJK, where a
-- character is 3 bytes: such a message could not be stored at all, and its event went dead.
-- The new index is built before the old one is dropped, so reads keep an index meanwhile (on a
-- large table, build it by hand first with CREATE INDEX CONCURRENTLY under the same name, and
-- check that pg_index.indisvalid is true for it before migrating).
CREATE INDEX IF NOT EXISTS inbox_messages_subject_md5 ON inbox_messages (account_id, md5(subject_key), created_at DESC);
DROP INDEX inbox_messages_subject;
