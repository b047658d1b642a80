-- Postern on Postgres, part 7: each refresh token records the token it was rotated from, so
-- the grace window (refreshReuseGraceSeconds) covers the just-rotated token only: one none of
-- whose successors has been used, however close in time the rotations were.
ALTER TABLE refresh_tokens ADD COLUMN parent text;
