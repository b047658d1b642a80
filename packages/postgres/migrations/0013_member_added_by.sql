-- Postern on Postgres, part 13: who added each inbox member. A member added by email counts
-- only once that user's address is proven, and a password reset that proves an address never
-- proven before undoes the memberships that account granted; both need to tell the user who
-- created an account (added_by NULL) from members added by an owner.
ALTER TABLE inbox_members ADD COLUMN added_by text;
-- Rows from before: the account's first member created it; every later one was added by an
-- owner, taken to be that first member (no better record exists). So members added earlier
-- also wait for a proven address, as new ones do.
UPDATE inbox_members m SET added_by = f.user_id
FROM (
  SELECT DISTINCT ON (account_id) account_id, user_id FROM inbox_members ORDER BY account_id, seq
) f
WHERE m.account_id = f.account_id AND m.user_id <> f.user_id;
-- dropGrantsOf finds the memberships a user added.
CREATE INDEX inbox_members_added_by ON inbox_members (added_by) WHERE added_by IS NOT NULL;
