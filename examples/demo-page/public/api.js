// The demo page's one way to talk to Postern: JSON over fetch, tokens in bodies and the
// Authorization header, never in URLs. The access token lives in memory only; the refresh
// token in sessionStorage (this tab only), so a reload keeps the session.

const REFRESH_KEY = 'postern-demo.refresh';
let accessToken = null;
const listeners = new Set();

export const session = {
  get signedIn() {
    return accessToken !== null;
  },
  /** Stores a session answer ({ accessToken, refreshToken? }). */
  set(answer) {
    accessToken = answer.accessToken;
    if (answer.refreshToken) sessionStorage.setItem(REFRESH_KEY, answer.refreshToken);
    for (const fn of listeners) fn(true);
  },
  clear() {
    accessToken = null;
    sessionStorage.removeItem(REFRESH_KEY);
    for (const fn of listeners) fn(false);
  },
  refreshToken() {
    return sessionStorage.getItem(REFRESH_KEY);
  },
  /** fn(signedIn) after every change. */
  onChange(fn) {
    listeners.add(fn);
  },
};

/** Trades the stored refresh token for a new session; false when there is none or it died. */
export async function refresh() {
  const refreshToken = session.refreshToken();
  if (!refreshToken) return false;
  const res = await call('/auth/refresh', { json: { refreshToken }, auth: false });
  if (!res.ok) {
    session.clear();
    return false;
  }
  session.set(res.body);
  return true;
}

async function call(path, { method, json, auth = true } = {}) {
  const headers = { accept: 'application/json' };
  if (json !== undefined) headers['content-type'] = 'application/json';
  if (auth && accessToken) headers.authorization = `Bearer ${accessToken}`;
  const res = await fetch(path, {
    method: method ?? (json === undefined ? 'GET' : 'POST'),
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const type = res.headers.get('content-type') ?? '';
  const body = /json/.test(type) ? await res.json() : await res.text();
  return { status: res.status, ok: res.ok, body };
}

/**
 * Calls a Postern route: `api('/auth/me')`, `api('/auth/login', { json })`,
 * `api('/auth/sessions/x', { method: 'DELETE' })`. Returns { status, ok, body }; an error's
 * body is the problem ({ code, title, detail, errors }). A 401 on an authenticated call
 * refreshes once and retries.
 */
export async function api(path, opts = {}) {
  const res = await call(path, opts);
  if (res.status === 401 && opts.auth !== false && accessToken && (await refresh())) return call(path, opts);
  return res;
}

/** Fetches an authenticated file (an inbox attachment) as a Blob; `null` when refused. */
export async function download(path) {
  const get = () =>
    fetch(path, {
      headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {},
      credentials: 'same-origin',
      cache: 'no-store',
    });
  let res = await get();
  if (res.status === 401 && accessToken && (await refresh())) res = await get();
  return res.ok ? res.blob() : null;
}

/** A one-line message for a failed call. */
export function problemText(res) {
  const b = res.body;
  if (b && typeof b === 'object') {
    const details = (b.errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ');
    return [b.title ?? `HTTP ${res.status}`, b.detail, details].filter(Boolean).join(' - ');
  }
  return `HTTP ${res.status}`;
}

/** Builds an element: h('button', { type: 'submit' }, 'Save'). Text only, never HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v !== false && v != null) el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c != null) el.append(c instanceof Node ? c : String(c));
  return el;
}
