import { errorOf, PosternClientError } from './errors.js';
import { bodyOf, type FetchFn, send } from './http.js';
import { webauthn } from './passkey.js';
import { createKeeper } from './session.js';
import type {
  Answer,
  Body,
  ChangePasswordInput,
  ClientOptions,
  InboxAccount,
  InboxMember,
  LogInResult,
  MfaRequiredAnswer,
  Passkey,
  PasskeyRegistered,
  RecoveryCodes,
  ReplyInput,
  Session,
  SessionAnswer,
  SessionInfo,
  SignUpAnswer,
  SignUpInput,
  ThreadDetail,
  ThreadPage,
  TotpSeed,
  User,
} from './types.js';

export type PosternClient = ReturnType<typeof createClient>;
type Password = { password?: string };

const enc = encodeURIComponent;
const isAbsolute = (u: string) => /^[a-z][a-z\d+.-]*:/i.test(u);

/** The file name of a `Content-Disposition: attachment` answer (RFC 6266, RFC 8187 first). */
function fileNameOf(disposition: string | null): string | null {
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition ?? '');
  if (star) {
    try {
      return decodeURIComponent(star[1]!);
    } catch {
      // a malformed escape: fall back to the plain name
    }
  }
  return /filename="([^"]*)"/i.exec(disposition ?? '')?.[1] ?? null;
}

/** A client of Postern's HTTP routes for a browser page or a Node process. */
export function createClient(options: ClientOptions = {}) {
  const base = (options.baseUrl ?? (typeof location === 'object' ? location.origin : '')).replace(/\/+$/, '');
  if (!isAbsolute(base)) throw new TypeError('createClient: baseUrl must be an absolute URL');
  const origin = new URL(base).origin;
  const authBase = base + (options.authPath ?? '/auth');
  const inboxBase = base + (options.inboxPath ?? '/inbox');
  const fetchFn: FetchFn = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);
  const cookie = (options.mode ?? (typeof document === 'object' ? 'cookie' : 'token')) === 'cookie';
  const keeper = createKeeper({
    fetch: fetchFn,
    authUrl: (p) => authBase + p,
    cookie,
    storage: options.storage,
    name: `postern:${authBase}`,
  });
  const { credentials } = keeper;
  /** The pending login's token between `logIn` and the second factor. */
  let pending: string | null = null;

  const call = <T>(method: string, url: string, json?: unknown) =>
    keeper.authed((token) => send(fetchFn, url, { method, json, token, credentials })).then(bodyOf<T>);
  const auth = <T>(method: string, path: string, json?: unknown) => call<T>(method, authBase + path, json);
  const inbox = <T>(method: string, path: string, json?: unknown) => call<T>(method, inboxBase + path, json);
  /** A route without a Bearer token (login steps, sign-up, password reset). */
  const open = <T>(path: string, json: unknown) =>
    send(fetchFn, authBase + path, { json, credentials }).then(bodyOf<T>);
  /** A step that may complete a login: it sets the cookie, so it waits for, and holds, the
   *  cross-tab lock of refreshes (another tab never presents a cookie this answer replaces). */
  const signing = <T>(path: string, json: unknown) => keeper.locked(() => open<T>(path, json));
  /** A factor changed: the user's `mfa` summary in the snapshot follows. */
  const thenReload = async <T>(p: Promise<T>): Promise<T> => {
    const r = await p;
    await keeper.loadUser();
    return r;
  };

  async function completed(answer: SessionAnswer | MfaRequiredAnswer): Promise<LogInResult> {
    if ('mfaRequired' in answer) {
      pending = answer.mfaToken;
      keeper.set({ status: 'mfa-required', user: null, methods: answer.methods });
      return { status: 'mfa-required', methods: answer.methods, enrol: answer.enrol };
    }
    pending = null;
    return { status: 'signed-in', user: await keeper.signIn(answer) };
  }
  /** A first factor enrolled with the pending token: the login completes with its recovery codes. */
  const enrolled = async (answer: Promise<SessionAnswer & Partial<RecoveryCodes>>) => {
    const a = await answer;
    const result = (await completed(a)) as Extract<LogInResult, { status: 'signed-in' }>;
    return { ...result, recoveryCodes: a.recoveryCodes ?? [] };
  };
  const pendingToken = () => {
    if (pending) return pending;
    throw new PosternClientError({ status: 0, code: 'no_pending_login', detail: 'Call logIn first' });
  };

  void keeper.restore();

  return {
    /** The current state; the same object until it changes (for useSyncExternalStore). */
    getSession: (): Session => keeper.getSession(),
    /** Calls `listener` after every change of the session; returns the unsubscribe function. */
    subscribe: (listener: () => void): (() => void) => keeper.subscribe(listener),

    signUp: (input: SignUpInput) => open<SignUpAnswer>('/signup', input),
    async logIn(input: { email: string; password: string }): Promise<LogInResult> {
      const body = { email: input.email, password: input.password, refreshToken: cookie ? 'cookie' : true };
      return completed(await signing('/login', body));
    },
    /** The second step of a login with a code: an authenticator app's, a mailed one or a recovery code. */
    async verify(input: { method: 'totp' | 'email' | 'recovery'; code: string }): Promise<LogInResult> {
      const token = pendingToken();
      return completed(await signing('/mfa/verify', { token, code: input.code, methodType: input.method }));
    },
    /** Mails a new login code (the email method). */
    resendCode: () => open<Answer<'resendCode', 202>>('/mfa/resend', { token: pendingToken() }),
    passkey: {
      /** The second step of a login with a passkey. */
      async logIn(): Promise<LogInResult> {
        const mfaToken = pendingToken();
        const optionsJSON = await open<any>('/mfa/webauthn/options', { mfaToken });
        const assertionResponse = await (await webauthn()).startAuthentication({ optionsJSON });
        return completed(await signing('/mfa/webauthn/verify', { mfaToken, assertionResponse }));
      },
      /** Adds a passkey to the signed-in account (the first factor turns MFA on). */
      async register(input: { name?: string } & Password = {}): Promise<PasskeyRegistered> {
        const pw = input.password === undefined ? undefined : { password: input.password };
        const optionsJSON = await auth<any>('POST', '/mfa/webauthn/register/options', pw);
        const attestationResponse = await (await webauthn()).startRegistration({ optionsJSON });
        return thenReload(
          auth<PasskeyRegistered>('POST', '/mfa/webauthn/register/verify', { attestationResponse, ...input }),
        );
      },
    },
    /** A login the server answered with `enrol` (every account needs a second factor, this one
     *  has none yet): setting up the first factor completes it. */
    enrol: {
      totpSetup: () => open<TotpSeed>('/mfa/enrol/totp/setup', { mfaToken: pendingToken() }),
      totpConfirm: (input: { code: string }) =>
        enrolled(signing('/mfa/enrol/totp/confirm', { mfaToken: pendingToken(), code: input.code })),
      emailSetup: () => open<{ accepted: true }>('/mfa/enrol/email/setup', { mfaToken: pendingToken() }),
      emailConfirm: (input: { code: string }) =>
        enrolled(signing('/mfa/enrol/email/confirm', { mfaToken: pendingToken(), code: input.code })),
      async passkey(input: { name?: string } = {}) {
        const mfaToken = pendingToken();
        const optionsJSON = await open<any>('/mfa/enrol/webauthn/options', { mfaToken });
        const attestationResponse = await (await webauthn()).startRegistration({ optionsJSON });
        return enrolled(signing('/mfa/enrol/webauthn/verify', { mfaToken, attestationResponse, ...input }));
      },
    },
    /** Ends the session here and in every tab of the origin. */
    logOut: (): Promise<void> => keeper.signOut(),
    /** The signed-in user, fresh from the server. */
    me: (): Promise<User> => keeper.loadUser(),
    /** Mails a password-reset code (the same answer for unknown addresses). */
    forgotPassword: (input: Body<'forgot'>) => open<Answer<'forgot', 202>>('/forgot', input),
    resetPassword: (input: Body<'forgotReset'>) => open<void>('/forgot-reset', input),

    account: {
      sessions: () => auth<{ sessions: SessionInfo[] }>('GET', '/sessions').then((a) => a.sessions),
      revokeSession: (id: string, input?: Password) => auth<void>('DELETE', `/sessions/${enc(id)}`, input),
      revokeOtherSessions: (input?: Password) => auth<void>('DELETE', '/sessions', input),
      changePassword: (input: ChangePasswordInput) => auth<void>('POST', '/password', input),
      sendVerificationEmail: () => auth<{ accepted: true }>('POST', '/verify-email/send', {}),
      verifyEmail: (input: { code: string }) =>
        thenReload(auth<{ user: User }>('POST', '/verify-email', input)),
      changeEmail: (input: Body<'requestEmailChange'>) => auth<{ accepted: true }>('POST', '/email', input),
      confirmEmailChange: (input: Body<'confirmEmailChange'>) =>
        thenReload(auth<{ user: User }>('POST', '/email/confirm', input)),
    },

    mfa: {
      totpSetup: (input?: Password) => auth<TotpSeed>('POST', '/mfa/totp/setup', input),
      totpConfirm: (input: { code: string } & Password) =>
        thenReload(auth<Partial<RecoveryCodes>>('POST', '/mfa/totp/confirm', input)),
      emailSetup: (input?: Password) => auth<{ accepted: true }>('POST', '/mfa/email/setup', input),
      emailConfirm: (input: { code: string } & Password) =>
        thenReload(auth<Partial<RecoveryCodes>>('POST', '/mfa/email/confirm', input)),
      passkeys: () =>
        auth<{ credentials: Passkey[] }>('GET', '/mfa/webauthn/credentials').then((a) => a.credentials),
      removePasskey: (id: string, input?: Password) =>
        thenReload(auth<void>('DELETE', `/mfa/webauthn/credentials/${enc(id)}`, input)),
      /** New recovery codes; the old ones stop working. */
      recoveryCodes: (input?: Password) => auth<RecoveryCodes>('POST', '/mfa/recovery-codes', input),
      /** Removes a factor (every passkey for `webauthn`). */
      remove: (method: 'totp' | 'email' | 'webauthn', input?: Password) =>
        thenReload(auth<void>('DELETE', `/mfa/${method}`, input)),
    },

    inbox: {
      accounts: () => inbox<{ accounts: InboxAccount[] }>('GET', '/accounts').then((a) => a.accounts),
      createAccount: (input: Body<'createAccount'>) => inbox<InboxAccount>('POST', '/accounts', input),
      addMember: (accountId: string, input: Body<'addMember'>) =>
        inbox<{ member: InboxMember }>('POST', `/accounts/${enc(accountId)}/members`, input).then(
          (a) => a.member,
        ),
      threads(accountId: string, page: { cursor?: string; limit?: number } = {}) {
        const q = new URLSearchParams();
        if (page.cursor) q.set('cursor', page.cursor);
        if (page.limit) q.set('limit', String(page.limit));
        const query = q.size ? `?${q}` : '';
        return inbox<ThreadPage>('GET', `/accounts/${enc(accountId)}/threads${query}`);
      },
      thread: (id: string) => inbox<ThreadDetail>('GET', `/threads/${enc(id)}`),
      reply: (threadId: string, input: ReplyInput) =>
        inbox<{ message: ThreadDetail['messages'][number] }>(
          'POST',
          `/threads/${enc(threadId)}/reply`,
          input,
        ).then((a) => a.message),
      /** Where an attachment's bytes are (they need the Bearer token: fetch them with `attachment`). */
      attachmentUrl: (id: string) => `${inboxBase}/attachments/${enc(id)}`,
      async attachment(id: string): Promise<{ blob: Blob; contentType: string; filename: string | null }> {
        const url = `${inboxBase}/attachments/${enc(id)}`;
        const res = await keeper.authed((token) => send(fetchFn, url, { token, credentials }));
        if (!res.ok) throw await errorOf(res);
        return {
          blob: await res.blob(),
          contentType: res.headers.get('content-type') ?? 'application/octet-stream',
          filename: fileNameOf(res.headers.get('content-disposition')),
        };
      },
    },

    /**
     * `fetch` for the host's own API: adds the access token and, when the answer is a 401
     * `invalid_token`, refreshes once and retries once; a refresh that fails (no answer, 429,
     * 5xx) hands back that 401 as the host sent it. A relative URL resolves against `baseUrl`.
     * Only requests to `baseUrl`'s origin get the token: any other URL (a CDN, an address from
     * user input) is fetched as given, so the token never leaves for another origin and another
     * origin's 401 never makes the client refresh.
     * A body that is a stream cannot be sent twice: give a string, Blob, FormData or buffer.
     */
    fetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
      const target =
        typeof input === 'string' && !isAbsolute(input) ? new URL(input, `${base}/`).href : input;
      const url = target instanceof Request ? target.url : String(target);
      if (new URL(url).origin !== origin) return fetchFn(target, init);
      return keeper.authed((token) => {
        const headers = new Headers(init.headers ?? (target instanceof Request ? target.headers : undefined));
        if (token) headers.set('authorization', `Bearer ${token}`);
        return fetchFn(target instanceof Request ? target.clone() : target, { ...init, headers });
      }, true);
    },

    /** Settles once the client knows whether a session is on (a reload's silent refresh). */
    ready: (): Promise<Session> =>
      new Promise((resolve) => {
        const check = () => {
          const s = keeper.getSession();
          if (s.status === 'loading') return false;
          resolve(s);
          return true;
        };
        if (check()) return;
        const off = keeper.subscribe(() => check() && off());
      }),
    /** Stops listening to other tabs. */
    close: () => keeper.close(),
  };
}
