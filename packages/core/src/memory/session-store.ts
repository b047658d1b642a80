import type { Clock } from '../ports/clock.js';
import { LONGEST_REUSE_WINDOW_SECONDS, type Session, type SessionStore } from '../ports/session-store.js';
import { hasEnded, sweepEvery } from './expiry.js';

/** How long ended-session ids stay in the feed, and ended/expired sessions in memory. */
const RETAIN_MS = 24 * 3600 * 1000;

interface TokenRow {
  sessionId: string;
  usedAt: number | null;
  /** The token this one was rotated from (null for a session's first). */
  parent: string | null;
  /** Cookie sessions: the salt this token was derived with from its parent. */
  salt?: string;
}

const copy = (s: Session): Session => structuredClone(s);

function isLive(s: Session, t: number): boolean {
  return s.endedAt === null && !hasEnded(s.expiresAt, t) && !hasEnded(s.idleExpiresAt, t);
}

/** Sessions, their refresh-token hashes and the ended feed, in Maps and one array. Every method
 *  runs without an `await` between its reads and writes: that is its atomicity. Ended and
 *  expired sessions, and the feed, are swept a day after their end, every 256th write.
 *  A real store: `rotate` as one conditional update of the token row (used once, within the
 *  session's budget) so racing processes cannot both rotate; the ended feed as rows with an
 *  ordered id that every process reads; the session cap per user under a lock on the user. */
export function memorySessionStore(clock: Clock): SessionStore {
  const sessions = new Map<string, Session>();
  const byUser = new Map<string, Set<string>>();
  const tokens = new Map<string, TokenRow>();
  const tokensOf = new Map<string, Set<string>>();
  const feed: Array<{ seq: number; sid: string; at: number }> = [];
  /** Rotation budget per session: when its window started and how many rotations it holds. */
  const rotations = new Map<string, { start: number; count: number }>();
  let seq = 0;

  const addToken = (sessionId: string, hash: string, parent: string | null = null, salt?: string) => {
    tokens.set(hash, { sessionId, usedAt: null, parent, ...(salt === undefined ? {} : { salt }) });
    const set = tokensOf.get(sessionId) ?? new Set<string>();
    tokensOf.set(sessionId, set);
    set.add(hash);
  };

  /** The tokens rotated out of `hash` (the grace paths only; it walks the session's tokens). */
  const childrenOf = (sessionId: string, hash: string) => {
    const out: TokenRow[] = [];
    for (const h of tokensOf.get(sessionId) ?? []) {
      const row = tokens.get(h);
      if (row?.parent === hash) out.push(row);
    }
    return out;
  };
  /** True when a token rotated out of `hash` has itself been used: `hash` is then no longer
   *  the just-rotated token. */
  const hasUsedChild = (sessionId: string, hash: string) =>
    childrenOf(sessionId, hash).some((row) => row.usedAt !== null);

  const end = (s: Session, now: Date, reason: string) => {
    s.endedAt = new Date(now);
    s.endReason = reason;
    feed.push({ seq: ++seq, sid: s.id, at: now.getTime() });
  };

  const liveOfUser = (userId: string, t: number): Session[] => {
    const out: Session[] = [];
    for (const id of byUser.get(userId) ?? []) {
      const s = sessions.get(id);
      if (s && isLive(s, t)) out.push(s);
    }
    return out;
  };

  // Sessions past their end (and the feed) are dropped RETAIN_MS after it, so memory stays bounded.
  const sweep = sweepEvery((now) => {
    const cut = now.getTime() - RETAIN_MS;
    for (const s of sessions.values()) {
      const over = Math.min(
        s.endedAt?.getTime() ?? Infinity,
        s.expiresAt.getTime(),
        s.idleExpiresAt.getTime(),
      );
      if (!hasEnded(over, cut)) continue;
      sessions.delete(s.id);
      byUser.get(s.userId)?.delete(s.id);
      if (byUser.get(s.userId)?.size === 0) byUser.delete(s.userId);
      for (const h of tokensOf.get(s.id) ?? []) tokens.delete(h);
      tokensOf.delete(s.id);
      rotations.delete(s.id);
    }
    // A newest token's salt serves repeats of the token before it, within its window only.
    const repeatsOver = now.getTime() - LONGEST_REUSE_WINDOW_SECONDS * 1000;
    for (const row of tokens.values()) {
      if (row.salt === undefined || row.parent === null) continue;
      const usedAt = tokens.get(row.parent)?.usedAt;
      if (usedAt == null || hasEnded(usedAt, repeatsOver)) delete row.salt;
    }
    let drop = 0;
    while (drop < feed.length && hasEnded(feed[drop]!.at, cut)) drop++;
    feed.splice(0, drop);
  });

  return {
    inProcess: true,

    async create(session, token, { maxPerUser }) {
      const s = copy(session);
      if (s.idleExpiresAt > s.expiresAt) s.idleExpiresAt = new Date(s.expiresAt);
      sessions.set(s.id, s);
      const ids = byUser.get(s.userId) ?? new Set<string>();
      byUser.set(s.userId, ids);
      ids.add(s.id);
      if (token) addToken(s.id, token.hash);
      const now = s.createdAt;
      const live = liveOfUser(s.userId, now.getTime()).sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime(),
      );
      const evicted: string[] = [];
      for (const old of live.slice(0, Math.max(0, live.length - maxPerUser))) {
        end(old, now, 'evicted');
        evicted.push(old.id);
      }
      sweep(clock.now());
      return evicted;
    },

    async findById(id) {
      const s = sessions.get(id);
      return s ? copy(s) : null;
    },

    async findByToken(hash) {
      const row = tokens.get(hash);
      const s = row && sessions.get(row.sessionId);
      if (!row || !s) return null;
      return { session: copy(s), usedAt: row.usedAt === null ? null : new Date(row.usedAt) };
    },

    async rotate(hash, next, now, opts = {}) {
      const t = now.getTime();
      const row = tokens.get(hash);
      const s = row && sessions.get(row.sessionId);
      if (!row || !s || !isLive(s, t) || tokens.has(next.hash)) return null;
      if (row.usedAt !== null) {
        const graceMs = ((s.cookie ? opts.cookieGraceSeconds : opts.graceSeconds) ?? 0) * 1000;
        if (graceMs <= 0 || t - row.usedAt > graceMs || hasUsedChild(s.id, hash)) return null;
        if (s.cookie) {
          const salt = childrenOf(s.id, hash)[0]?.salt;
          return salt === undefined ? null : { repeat: 'cookie', session: copy(s), salt };
        }
      }
      const window = rotations.get(s.id);
      const windowOver = !window || !opts.budget || t - window.start >= opts.budget.windowSeconds * 1000;
      if (!windowOver && window.count >= opts.budget!.rotations) {
        return { refused: 'budget', retryAt: new Date(window.start + opts.budget!.windowSeconds * 1000) };
      }
      row.usedAt ??= t;
      // Rotated: no repeat can need the salt that derived this token any more.
      delete row.salt;
      addToken(s.id, next.hash, hash, s.cookie ? next.salt : undefined);
      rotations.set(
        s.id,
        windowOver ? { start: t, count: 1 } : { start: window.start, count: window.count + 1 },
      );
      s.lastUsedAt = new Date(t);
      s.idleExpiresAt = new Date(Math.min(next.idleExpiresAt.getTime(), s.expiresAt.getTime()));
      sweep(clock.now());
      return copy(s);
    },

    async revoke(id, now, reason) {
      const s = sessions.get(id);
      if (!s || s.endedAt !== null) return false;
      end(s, now, reason);
      return true;
    },

    async revokeAllForUser(userId, now, { reason, exceptSid }) {
      const ended: string[] = [];
      for (const id of byUser.get(userId) ?? []) {
        const s = sessions.get(id);
        if (!s || s.endedAt !== null || id === exceptSid) continue;
        end(s, now, reason);
        ended.push(id);
      }
      return ended;
    },

    async revokeAll(now, reason) {
      let n = 0;
      for (const s of sessions.values()) {
        if (s.endedAt !== null) continue;
        end(s, now, reason);
        n++;
      }
      return n;
    },

    async listForUser(userId, now) {
      return liveOfUser(userId, now.getTime())
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .map(copy);
    },

    async endedSince(cursor, notBefore) {
      const after = cursor === null ? Number.NaN : Number(cursor);
      if (Number.isNaN(after)) {
        const from = notBefore.getTime();
        return { sids: feed.filter((e) => e.at >= from).map((e) => e.sid), cursor: String(seq) };
      }
      // The feed is ordered by seq: binary search for the first entry after the cursor, so the
      // per-request read of an in-process store costs O(log n).
      let lo = 0;
      let hi = feed.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (feed[mid]!.seq <= after) lo = mid + 1;
        else hi = mid;
      }
      return { sids: feed.slice(lo).map((e) => e.sid), cursor: String(seq) };
    },
  };
}
