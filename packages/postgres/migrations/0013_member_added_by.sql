-- Postern on Postgres, part 13: who added each inbox member. A member added by email counts
-- only once that user's address is proven, and a password reset that proves an address never
-- proven before undoes the memberships that account granted; both need to tell the user who
-- created an account (added_by NULL) from members added by an owner (that owner's id).
-- The default '' ("added by someone unknown") is for rows an older release writes during a
-- rolling deploy: they wait for a proven address like any member added by email, never count
-- as a creator. Adding a column with a constant default changes the catalogue only.
ALTER TABLE inbox_members ADD COLUMN added_by text DEFAULT '';
-- Rows from before: the account's first member created it; every later one was added by an
-- owner, taken to be that first member (no better record exists). So members added earlier
-- also wait for a proven address, as new ones do.
UPDATE inbox_members m
SET added_by = CASE WHEN m.user_id = f.user_id THEN NULL ELSE f.user_id END
FROM (
  SELECT DISTINCT ON (account_id) account_id, user_id FROM inbox_members ORDER BY account_id, seq
) f
WHERE m.account_id = f.account_id;
-- dropGrantsOf finds the memberships a user added.
CREATE INDEX inbox_members_added_by ON inbox_members (added_by) WHERE added_by IS NOT NULL;
