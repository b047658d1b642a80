-- Postern on Postgres, part 11: every delivery event is kept as a mail_event, also
-- one that names no message (no usable `email_id`): it is stored with a NULL provider id,
-- already applied, for audit. Dropping NOT NULL changes the catalogue only (no
-- table rewrite, no scan); releases before this one never read or write such rows.
ALTER TABLE mail_events ALTER COLUMN provider_message_id DROP NOT NULL;
