-- Gatehouse on Postgres, part 8: a reset code records the address it was mailed to, so a code
-- mailed to an address the user has just left (an email change racing a reset request) is dead.
-- Codes from before this migration have none and match no address (they live 30 minutes).
ALTER TABLE reset_codes ADD COLUMN email text;
