import type { User, UserStore } from '../ports/user-store.js';

/** Callers get their own copy (as from a database); by hand, as structuredClone is slow on the
 *  `/auth/me` path. The port's User is flat apart from `roles` and the dates. */
const copy = (u: User): User => ({
  ...u,
  roles: [...u.roles],
  createdAt: new Date(u.createdAt.getTime()),
  passwordChangedAt: new Date(u.passwordChangedAt.getTime()),
});

/** Users in a Map; a second Map enforces one account per canonical email. `onDelete` drops
 *  what other stores keep under the user id, in the same tick as the delete (atomic).
 *  A real store: a unique index on the canonical email (the insert decides, not a prior
 *  read), `setPassword`'s `ifHash` as a conditional update, and the user's other rows deleted
 *  in the same transaction (or by foreign keys). */
export function memoryUserStore(onDelete: (id: string) => void = () => {}): UserStore {
  const byId = new Map<string, User>();
  const idByEmail = new Map<string, string>();

  const update = (id: string, change: (u: User) => void): boolean => {
    const u = byId.get(id);
    if (!u) return false;
    change(u);
    return true;
  };

  const findById = async (id: string): Promise<User | null> => {
    const u = byId.get(id);
    return u ? copy(u) : null;
  };
  return {
    async create(user) {
      if (idByEmail.has(user.email) || byId.has(user.id)) return null;
      byId.set(user.id, copy(user));
      idByEmail.set(user.email, user.id);
      return copy(user);
    },
    findById,
    // One event loop: every write is already applied when it returns.
    findByIdSettled: findById,
    async findByEmail(email) {
      const id = idByEmail.get(email);
      const u = id === undefined ? undefined : byId.get(id);
      return u ? copy(u) : null;
    },
    async setPassword(id, { passwordHash, changedAt, ifHash }) {
      const u = byId.get(id);
      if (!u || (ifHash !== undefined && u.passwordHash !== ifHash)) return false;
      u.passwordHash = passwordHash;
      u.passwordChangedAt = new Date(changedAt);
      return true;
    },
    async setDisabled(id, disabled) {
      return update(id, (u) => {
        u.disabled = disabled;
      });
    },
    async setRoles(id, roles) {
      return update(id, (u) => {
        u.roles = [...roles];
      });
    },
    async changeEmail(id, email) {
      const u = byId.get(id);
      if (!u) return 'absent';
      const owner = idByEmail.get(email);
      if (owner !== undefined && owner !== id) return 'taken';
      idByEmail.delete(u.email);
      idByEmail.set(email, id);
      u.email = email;
      u.emailVerified = true;
      return 'changed';
    },
    async markEmailVerified(id) {
      return update(id, (u) => {
        u.emailVerified = true;
      });
    },
    async delete(id) {
      const u = byId.get(id);
      if (!u) return false;
      byId.delete(id);
      idByEmail.delete(u.email);
      onDelete(id);
      return true;
    },
  };
}
