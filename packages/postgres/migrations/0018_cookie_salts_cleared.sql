-- Postern on Postgres, part 18: a cookie session's salt is kept only while a repeat may need
-- it. A token's salt (with the token before it) derives that token, so a dump of salts plus
-- one old token would lead to every later token. Rotation now clears the salt of the token it
-- uses; the session sweep clears a newest token's salt once the token before it was rotated
-- longer ago than the longest reuse window. Salts already kept on rotated rows go here; the
-- partial index holds only the salted rows (about one per cookie session), so the sweep's
-- look-up stays small.
UPDATE refresh_tokens SET salt = NULL WHERE salt IS NOT NULL AND used_at IS NOT NULL;
CREATE INDEX refresh_tokens_salted ON refresh_tokens (parent) WHERE salt IS NOT NULL;
