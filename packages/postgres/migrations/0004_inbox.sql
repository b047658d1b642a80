-- Postern on Postgres, part 4: inbox accounts and members, threads, messages, attachment
-- metadata, mail events, notification idempotency. Unique constraints carry every
-- de-duplication: the address per account, provider_message_id per account, an attachment per
-- (message, source), a mail event per outbox event, a notification per key.

CREATE TABLE inbox_accounts (
  id text COLLATE "C" PRIMARY KEY,
  -- Canonical address (trim, NFC, lower case).
  address text NOT NULL UNIQUE,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE inbox_members (
  account_id text NOT NULL,
  user_id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, user_id)
);
CREATE INDEX inbox_members_user ON inbox_members (user_id);

CREATE TABLE inbox_threads (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL,
  subject text NOT NULL,
  subject_key text NOT NULL,
  created_at timestamptz NOT NULL,
  last_message_at timestamptz NOT NULL,
  message_count integer NOT NULL DEFAULT 0
);
-- The thread list: newest first, keyset-paginated on (last_message_at, id).
CREATE INDEX inbox_threads_list ON inbox_threads (account_id, last_message_at DESC, id DESC)
  WHERE message_count > 0;

CREATE TABLE inbox_messages (
  id text COLLATE "C" PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  account_id text NOT NULL,
  thread_id text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  provider_message_id text NOT NULL,
  message_id text,
  in_reply_to text[] NOT NULL,
  "references" text[] NOT NULL,
  "from" text NOT NULL,
  from_address text,
  reply_to text,
  "to" text[] NOT NULL,
  cc text[] NOT NULL,
  recipients text[] NOT NULL,
  subject text NOT NULL,
  subject_key text NOT NULL,
  text text NOT NULL,
  html text,
  status text NOT NULL,
  opened_at timestamptz,
  open_count integer NOT NULL DEFAULT 0,
  clicked_at timestamptz,
  click_count integer NOT NULL DEFAULT 0,
  thread_keys text[] NOT NULL,
  created_at timestamptz NOT NULL,
  processed_at timestamptz,
  -- De-duplication of inbound mail and the handle of delivery events.
  UNIQUE (account_id, provider_message_id)
);
CREATE INDEX inbox_messages_thread ON inbox_messages (thread_id, created_at, id);
CREATE INDEX inbox_messages_provider ON inbox_messages (provider_message_id) WHERE direction = 'outbound';
-- Threading strategy 1: In-Reply-To/References tokens against outbound messages' keys.
CREATE INDEX inbox_messages_thread_keys ON inbox_messages USING gin (thread_keys) WHERE direction = 'outbound';
-- Threading strategies 2 and 3: the newest message with a subject in an account.
CREATE INDEX inbox_messages_subject ON inbox_messages (account_id, subject_key, created_at DESC);

CREATE TABLE inbox_attachments (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  account_id text NOT NULL,
  message_id text NOT NULL,
  source_key text NOT NULL,
  filename text NOT NULL,
  content_type text NOT NULL,
  size bigint NOT NULL,
  content_id text,
  inline boolean NOT NULL,
  file_key text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (message_id, source_key)
);

CREATE TABLE mail_events (
  -- The outbox event id: one stored event per delivered outbox event.
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  type text NOT NULL,
  kind text NOT NULL,
  status text,
  provider_message_id text NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL,
  detail text,
  applied_at timestamptz
);
CREATE INDEX mail_events_pending ON mail_events (provider_message_id, occurred_at) WHERE applied_at IS NULL;

-- Notification idempotency (`${messageId}:${userId}`): a claim holds a lease; completed keys stay.
CREATE TABLE inbox_notifications (
  key text PRIMARY KEY,
  lease_until timestamptz,
  -- Presence key of the claiming worker process (see the outbox): a dead claimer's lease ends.
  owner integer,
  completed_at timestamptz
);
