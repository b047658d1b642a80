-- Postern on Postgres, part 15: browser sessions, whose refresh token travels in an HttpOnly
-- cookie (login `refreshToken: 'cookie'`). The session and the pending MFA login remember the
-- kind: a cookie session's answers set the cookie, and its reuse window is its own. A cookie
-- session rotates into a token derived from the presented one with a random salt kept on the
-- successor's row, so a repeat of the just-rotated token within the window is answered with
-- the same newest token (never a stored token: only hashes and the salt are kept).
-- Columns with constant defaults change the catalogue only (no table rewrite).
ALTER TABLE sessions ADD COLUMN refresh_cookie boolean NOT NULL DEFAULT false;
ALTER TABLE refresh_tokens ADD COLUMN salt text;
ALTER TABLE pending_logins ADD COLUMN refresh_cookie boolean NOT NULL DEFAULT false;
