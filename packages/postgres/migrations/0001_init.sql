-- Postern on Postgres, part 1: the outbox (webhook receipts are its dedupe keys).
-- Applied by migrate() with search_path set to the target schema; names are unqualified.
-- Append-only: never edit a released file, add the next number instead.

CREATE TABLE outbox_events (
  id text PRIMARY KEY,
  -- Tie-break for events due at the same instant: claims hand them out in insertion order.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  name text NOT NULL,
  payload text NOT NULL,
  dedupe_key text UNIQUE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  available_at timestamptz NOT NULL,
  locked_by text,
  locked_until timestamptz,
  -- Presence key of the claiming process (see wake.ts): while that process lives it holds an
  -- advisory lock on it; once the lock is gone the lease is released without waiting it out.
  locked_owner integer,
  last_error text,
  outcome text,
  created_at timestamptz NOT NULL,
  finished_at timestamptz
);

-- Claims scan only pending rows, oldest due first.
CREATE INDEX outbox_events_due ON outbox_events (available_at, seq) WHERE status = 'pending';
CREATE INDEX outbox_events_dead ON outbox_events (finished_at DESC) WHERE status = 'dead';
CREATE INDEX outbox_events_done ON outbox_events (finished_at) WHERE status = 'done';
CREATE INDEX outbox_events_owned ON outbox_events (locked_owner) WHERE status = 'pending' AND locked_owner IS NOT NULL;
