-- Postern on Postgres, part 17: several limiter keys checked in order in one call. A login
-- counts three buckets; a refused attempt must hold no point in the buckets that did not
-- refuse it, not even until a refund lands (a flood of refused guesses from one address would
-- otherwise keep the owner's own bucket at its limit). The function locks every key's row in
-- key order (a missing one is made as an ended window, which reads as absent), reads the
-- latest counters, and counts either every key or only the first one, in the caller's order,
-- that the add takes over its limit. Keys come sorted by their UTF-8 bytes, the order every
-- limiter statement locks rows in, so no two calls deadlock. All in the caller's transaction,
-- so no other call sees a point that is then taken back.
CREATE FUNCTION limiter_consume_in_order(
  p_keys text[],
  p_points integer[],
  p_reset_at timestamptz[],
  p_limits integer[],
  p_order integer[],
  p_now timestamptz
) RETURNS TABLE (counted_key text, counted_points integer, counted_reset_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  refusing integer;
BEGIN
  INSERT INTO limiter AS l (key, points, reset_at)
  SELECT e.k, 0, p_now FROM unnest(p_keys) WITH ORDINALITY AS e(k, n) ORDER BY e.n
  ON CONFLICT (key) DO UPDATE SET points = l.points;
  SELECT min(e.n) INTO refusing
  FROM unnest(p_keys, p_points, p_limits, p_order) AS e(k, pts, lim, n)
  JOIN limiter l ON l.key = e.k
  WHERE CASE WHEN l.reset_at <= p_now THEN e.pts ELSE l.points + e.pts END > e.lim;
  RETURN QUERY
    UPDATE limiter AS l SET
      points = CASE WHEN l.reset_at <= p_now THEN e.pts ELSE l.points + e.pts END,
      reset_at = CASE WHEN l.reset_at <= p_now THEN e.fresh ELSE l.reset_at END
    FROM unnest(p_keys, p_points, p_reset_at, p_order) AS e(k, pts, fresh, n)
    WHERE l.key = e.k AND (refusing IS NULL OR e.n = refusing)
    RETURNING l.key, l.points, l.reset_at;
END
$$;
