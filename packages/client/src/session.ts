import { PosternClientError } from './errors.js';
import { bodyOf, type FetchFn, isInvalidToken, send } from './http.js';
import type { Session, SessionAnswer, TokenStorage, User } from './types.js';

const LOADING: Session = { status: 'loading', user: null };
const SIGNED_OUT: Session = { status: 'signed-out', user: null };
/** An access token is renewed this long before its end (at most a quarter of its lifetime),
 *  for the time a request is in flight. */
const EARLY_MS = 1000;
/** A reload's refresh that got no verdict (no answer, 429, 5xx) is tried again after this, then
 *  twice as long each time, up to `RETRY_MAX_MS`; a `Retry-After` of the answer wins. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 60_000;

export interface KeeperOptions {
  fetch: FetchFn;
  /** URL of an auth route: authUrl('/refresh'). */
  authUrl: (path: string) => string;
  /** Refresh token in an HttpOnly cookie (browsers) rather than held by the client. */
  cookie: boolean;
  storage?: TokenStorage;
  /** Name of the cross-tab lock and broadcast channel (one per Postern origin). */
  name: string;
}

export type Keeper = ReturnType<typeof createKeeper>;

/** The session's state: the access token (memory only), the refresh token (cookie, memory or
 *  the caller's storage), refreshes and the snapshot listeners see. */
export function createKeeper(o: KeeperOptions) {
  let held: string | null = null;
  const storage: TokenStorage = o.storage ?? {
    get: () => held,
    set: (t) => {
      held = t;
    },
    delete: () => {
      held = null;
    },
  };
  let session: Session = o.cookie || o.storage ? LOADING : SIGNED_OUT;
  let access: { token: string; until: number } | null = null;
  let inflight: Promise<string | null> | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const listeners = new Set<() => void>();
  const credentials: RequestCredentials | undefined = o.cookie ? 'include' : undefined;
  const channel = o.cookie && typeof BroadcastChannel === 'function' ? new BroadcastChannel(o.name) : null;
  const locks = o.cookie && typeof navigator === 'object' ? navigator.locks : undefined;

  const set = (next: Session) => {
    session = next;
    for (const l of listeners) l();
  };
  const signedOut = () => {
    access = null;
    if (session.status !== 'signed-out') set(SIGNED_OUT);
  };
  const post = (path: string, json: unknown) =>
    send(o.fetch, o.authUrl(path), { json, credentials }).then(bodyOf<SessionAnswer | undefined>);
  /** Across the tabs of an origin one cookie request at a time: a tab never presents a cookie
   *  another tab is rotating. */
  const locked = <T>(fn: () => Promise<T>): Promise<T> =>
    locks ? (locks.request(o.name, fn) as Promise<T>) : fn();

  async function accept(answer: SessionAnswer) {
    const ms = answer.expiresIn * 1000;
    access = { token: answer.accessToken, until: Date.now() + ms - Math.min(EARLY_MS, ms / 4) };
    if (!o.cookie && answer.refreshToken) await storage.set(answer.refreshToken);
  }

  /** A new access token for the refresh token; null once the session is over. Single-flight
   *  within the tab, serialised across tabs. */
  function refresh(): Promise<string | null> {
    inflight ??= locked(async () => {
      const stored = o.cookie ? undefined : await storage.get();
      if (!o.cookie && !stored) {
        signedOut();
        return null;
      }
      try {
        await accept((await post('/refresh', o.cookie ? {} : { refreshToken: stored }))!);
        return access!.token;
      } catch (e) {
        // Refused (401: ended, reused, expired, no cookie): the session is over. Anything else
        // (no answer, throttled, the server down, a refusal of the request itself) says nothing
        // about the session: it may live, the caller sees the error.
        if (!(e instanceof PosternClientError) || e.status !== 401) throw e;
        if (!o.cookie) await storage.delete();
        signedOut();
        return null;
      }
    }).finally(() => {
      inflight = null;
    });
    return inflight;
  }

  /** The access token to send now, renewed first when it has run out. */
  async function currentToken(): Promise<string | null> {
    if (inflight) return inflight;
    if (access && Date.now() < access.until) return access.token;
    if (session.status === 'signed-in') return refresh();
    return access?.token ?? null;
  }

  /** A request with the Bearer token; on a 401 `invalid_token` one refresh (shared with every
   *  call that hit the same token) and one retry. With `keep401`, a refresh that fails (no
   *  answer, 429, 5xx) answers the 401 itself rather than the refresh's error. */
  async function authed(
    attempt: (token: string | null) => Promise<Response>,
    keep401 = false,
  ): Promise<Response> {
    const token = await currentToken().catch((e: unknown) => {
      if (keep401) return access?.token ?? null;
      throw e;
    });
    const res = await attempt(token);
    if (!token || !(await isInvalidToken(res))) return res;
    let next: string | null;
    try {
      next = inflight ? await inflight : access && access.token !== token ? access.token : await refresh();
    } catch (e) {
      if (keep401) return res;
      throw e;
    }
    return next ? attempt(next) : res;
  }

  async function loadUser(): Promise<User> {
    const url = o.authUrl('/me');
    const res = await authed((token) => send(o.fetch, url, { token, credentials }));
    const { user } = await bodyOf<{ user: User }>(res);
    if (session.status !== 'signed-in' || JSON.stringify(session.user) !== JSON.stringify(user))
      set({ status: 'signed-in', user });
    return user;
  }

  /** A reload keeps the session: a refresh with the cookie or the stored token. Only a refused
   *  refresh (401) signs out; one that got no verdict (no answer, 429, 5xx) leaves the session
   *  unknown (`loading`) and is tried again later, so a server that is down or busy for a
   *  moment does not show a signed-in user as signed out. */
  async function restore(attempt = 0): Promise<void> {
    if (session.status !== 'loading' || closed) return;
    try {
      if (await refresh()) await loadUser();
    } catch (e) {
      if (session.status !== 'loading' || closed) return;
      const after = e instanceof PosternClientError ? e.retryAfter : undefined;
      const ms = Math.min(after === undefined ? RETRY_FIRST_MS * 2 ** attempt : after * 1000, RETRY_MAX_MS);
      retry = setTimeout(() => void restore(attempt + 1), ms);
    }
  }

  /** Another tab signed in (the cookie is new: take a token of our own) or out. */
  if (channel)
    channel.onmessage = (e: MessageEvent) => {
      if (e.data?.type === 'signed-out') signedOut();
      else if (e.data?.type === 'signed-in')
        refresh()
          .then((t) => (t ? loadUser() : null))
          .catch(() => {});
    };

  return {
    getSession: () => session,
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    set,
    authed,
    loadUser,
    refresh,
    credentials,
    restore,
    /** A completed login: the new session is this tab's and, through the cookie, every tab's. */
    async signIn(answer: SessionAnswer): Promise<User> {
      await accept(answer);
      const user = await loadUser();
      channel?.postMessage({ type: 'signed-in' });
      return user;
    },
    /** Signed out only once the server ended the session (or says it had ended): a failed
     *  logout (network, 5xx, 403) throws and leaves the session as it is, since a cookie session
     *  the server still holds would come back at the next reload. */
    async signOut() {
      try {
        const stored = o.cookie ? undefined : await storage.get();
        if (o.cookie) await locked(() => post('/logout', {}));
        else if (stored) await post('/logout', { refreshToken: stored });
      } catch (e) {
        // Already ended (401) is signed out too.
        if (!(e instanceof PosternClientError) || e.status !== 401) throw e;
      }
      if (!o.cookie) await storage.delete();
      signedOut();
      channel?.postMessage({ type: 'signed-out' });
    },
    close() {
      closed = true;
      clearTimeout(retry);
      channel?.close();
      listeners.clear();
    },
    /** Runs `fn` under the cross-tab lock of cookie requests (a login sets the cookie a
     *  refresh in another tab may be presenting). */
    locked,
  };
}
