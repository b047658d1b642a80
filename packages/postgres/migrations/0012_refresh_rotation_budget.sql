-- Postern on Postgres, part 12: a budget of refresh rotations per session and window
-- (`throttle['refresh:session']`). Each rotation added a refresh_tokens row that lives as long
-- as its session, so one account refreshing in a loop grew the table by ~1.6 GB an hour. The
-- count sits on the session row the rotation already updates: no extra statement per refresh.
-- Adding columns with constant defaults changes the catalogue only (no table rewrite).
ALTER TABLE sessions
  ADD COLUMN rotation_window_start timestamptz,
  ADD COLUMN rotations_in_window integer NOT NULL DEFAULT 0;
