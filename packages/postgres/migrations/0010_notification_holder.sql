-- Postern on Postgres, part 10: a notification claim names the outbox event that holds it.
-- A redelivery of that same event (its lease ran out while the first delivery was still
-- sending) must wait for the claim; another event's claim may be left to that event's retries.
ALTER TABLE inbox_notifications ADD COLUMN holder text;
