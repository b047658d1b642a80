-- Postern on Postgres, part 14: the workers delete delivery events past their retention (one
-- still waiting for its message after `inbox.unmatchedEventRetentionMs`, an applied one after
-- `inbox.mailEventRetentionMs`), oldest first, a batch per statement. These indexes find each
-- batch without a scan of the table. On a large table, build them by hand first with CREATE
-- INDEX CONCURRENTLY under the same names (and check pg_index.indisvalid) before migrating.
CREATE INDEX IF NOT EXISTS mail_events_unmatched_age ON mail_events (recorded_at) WHERE applied_at IS NULL;
CREATE INDEX IF NOT EXISTS mail_events_applied_age ON mail_events (recorded_at) WHERE applied_at IS NOT NULL;
