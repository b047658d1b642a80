-- Postern on Postgres, part 8: a reset code records the address it was mailed to, so a code
-- mailed to an address the user has just left (an email change racing a reset request) is dead.
-- Codes without one (from before this migration, or from instances not yet upgraded during a
-- rolling deploy) are taken as before.
ALTER TABLE reset_codes ADD COLUMN email text;
