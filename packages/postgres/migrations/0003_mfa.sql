-- Postern on Postgres, part 3: MFA factors, pending logins, email codes, recovery codes,
-- WebAuthn credentials and challenges.

-- Confirmed TOTP and email factors; `secret` is the AES-256-GCM sealed TOTP seed
-- ({ kid, iv, data }), never the seed itself.
CREATE TABLE mfa_factors (
  user_id text NOT NULL,
  type text NOT NULL CHECK (type IN ('totp', 'email')),
  enabled_at timestamptz NOT NULL,
  secret jsonb,
  last_step bigint,
  PRIMARY KEY (user_id, type)
);

-- TOTP seeds handed out by setup, waiting for their first code: one per user.
CREATE TABLE mfa_pending_totp (
  user_id text PRIMARY KEY,
  secret jsonb NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE pending_logins (
  jti text PRIMARY KEY,
  user_id text NOT NULL,
  refresh boolean NOT NULL,
  methods text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  failures integer NOT NULL DEFAULT 0,
  sends integer NOT NULL DEFAULT 0,
  last_sent_at timestamptz
);
CREATE INDEX pending_logins_user ON pending_logins (user_id);
CREATE INDEX pending_logins_expiry ON pending_logins (expires_at);

-- One live emailed code per key (`login:<jti>`, `enrol:<userId>`), stored as a hash.
CREATE TABLE mfa_email_codes (
  key text PRIMARY KEY,
  user_id text NOT NULL,
  code_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX mfa_email_codes_expiry ON mfa_email_codes (expires_at);

-- Unused recovery codes (a used code is deleted); Argon2id hashes.
CREATE TABLE mfa_recovery_codes (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL,
  selector text NOT NULL,
  hash text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX mfa_recovery_codes_user ON mfa_recovery_codes (user_id);

CREATE TABLE webauthn_credentials (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL,
  public_key bytea NOT NULL,
  counter bigint NOT NULL,
  transports text[] NOT NULL,
  name text NOT NULL,
  device_type text NOT NULL,
  backed_up boolean NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX webauthn_credentials_user ON webauthn_credentials (user_id, created_at);

-- One live challenge per (purpose, subject); taking it deletes it.
CREATE TABLE webauthn_challenges (
  purpose text NOT NULL,
  subject text NOT NULL,
  user_id text NOT NULL,
  challenge text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (purpose, subject)
);
CREATE INDEX webauthn_challenges_expiry ON webauthn_challenges (expires_at);
