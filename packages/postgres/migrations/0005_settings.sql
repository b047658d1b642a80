-- Postern on Postgres, part 5: runtime settings shared by every instance (postgresSettings),
-- e.g. `inbox.mail.webhook-secret`, so a secret rotates everywhere without a restart.

CREATE TABLE settings (
  key text PRIMARY KEY,
  value text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
