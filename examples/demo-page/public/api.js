// The demo page's one way to talk to Postern: @postern/client (served from vendor/). The
// refresh token is an HttpOnly cookie no script can read, the access token stays in the
// client's memory; every tab of this origin shares the session.
import { createClient, PosternClientError } from './vendor/postern-client/index.js';

export const client = createClient();

/**
 * Runs a client call and reports like an HTTP answer: `{ ok: true, body }`, or
 * `{ ok: false, status, code, error }` with the PosternClientError (or a browser error such as
 * a cancelled passkey prompt), so a form shows what went wrong instead of throwing.
 */
export async function attempt(promise) {
  try {
    return { ok: true, body: await promise };
  } catch (error) {
    const problem = error instanceof PosternClientError;
    return { ok: false, status: problem ? error.status : 0, code: problem ? error.code : undefined, error };
  }
}

/** A one-line message for a failed call. */
export function problemText(res) {
  const e = res.error ?? {};
  const details = (e.errors ?? []).map((f) => `${f.path}: ${f.message}`).join('; ');
  return [e.title ?? e.message ?? `HTTP ${res.status}`, e.detail, details].filter(Boolean).join(' - ');
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
