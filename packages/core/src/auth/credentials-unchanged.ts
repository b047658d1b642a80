import type { Stores } from '../ports/stores.js';
import type { User } from '../ports/user-store.js';

/** Whether what a login verified still holds once every write to the user in flight has
 *  settled: the same password (by when it was set, so a rehash keeps it), not disabled, not
 *  deleted. Called after the login created its session or pending login: a reset, change,
 *  disable or deletion committing later ends what it finds, that one included; one that
 *  committed before shows here, and the caller undoes what it created. */
export async function credentialsUnchanged(stores: Stores, seen: User): Promise<boolean> {
  const now = await stores.users.findByIdSettled(seen.id);
  return (
    now !== null && !now.disabled && now.passwordChangedAt.getTime() === seen.passwordChangedAt.getTime()
  );
}
