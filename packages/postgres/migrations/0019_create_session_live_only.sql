-- Postern on Postgres, part 19: `create_session` takes only what a new session can have. A
-- session is created live, so its end time and reason were always NULL: those two parameters
-- go, and the columns keep their NULL default. The steps and their order are those of part 16
-- (the per-user lock, the session, its refresh token, the eviction over the cap).
DROP FUNCTION create_session(text, text, text, timestamptz, timestamptz, timestamptz, timestamptz,
  timestamptz, text[], text, text, timestamptz, text, boolean, text, bigint);
CREATE FUNCTION create_session(
  p_lock_key text,
  p_id text,
  p_user_id text,
  p_created_at timestamptz,
  p_expires_at timestamptz,
  p_idle_expires_at timestamptz,
  p_last_used_at timestamptz,
  p_auth_time timestamptz,
  p_amr text[],
  p_ip text,
  p_user_agent text,
  p_refresh_cookie boolean,
  p_token_hash text,
  p_max_per_user bigint
) RETURNS TABLE (evicted_id text, evicted_created_at timestamptz, evicted_seq bigint)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(p_lock_key));
  INSERT INTO sessions (id, user_id, created_at, expires_at, idle_expires_at, last_used_at, auth_time,
                        amr, ip, user_agent, refresh_cookie)
  VALUES (p_id, p_user_id, p_created_at, p_expires_at, LEAST(p_idle_expires_at, p_expires_at),
          p_last_used_at, p_auth_time, p_amr, p_ip, p_user_agent, p_refresh_cookie);
  IF p_token_hash IS NOT NULL THEN
    INSERT INTO refresh_tokens (hash, session_id, created_at) VALUES (p_token_hash, p_id, p_created_at);
  END IF;
  RETURN QUERY
    UPDATE sessions s SET ended_at = p_created_at, end_reason = 'evicted', ended_xid = pg_current_xact_id()
    WHERE s.id IN (
      SELECT o.id FROM sessions o
      WHERE o.user_id = p_user_id AND o.ended_at IS NULL
        AND o.expires_at > p_created_at AND o.idle_expires_at > p_created_at
      ORDER BY o.created_at DESC, o.seq DESC OFFSET p_max_per_user
    )
    RETURNING s.id, s.created_at, s.seq;
END
$$;
