// The demo page's shell: sign-up, login, forgot/reset, account. MFA and inbox live in
// mfa.js and inbox.js, each mounted into its own section with the same context.
import { attempt, client, h, problemText } from './api.js';
import { mountInbox } from './inbox.js';
import { challenge, mountMfa } from './mfa.js';

const $ = (id) => document.getElementById(id);

function status(message, isError = false) {
  $('status').textContent = message;
  $('status').className = isError ? 'error' : '';
}

/** What mfa.js and inbox.js get: the client, build elements, report, re-render. */
const ctx = { client, attempt, h, problemText, status, refreshAccount: () => showAccount() };

function show(state) {
  for (const el of document.querySelectorAll('[data-when]')) el.hidden = el.dataset.when !== state;
  document.body.dataset.view = state;
}

function formJson(form) {
  return Object.fromEntries(new FormData(form));
}

/** The account of the signed-in user, as the client knows it (fresh after every change). */
function showAccount() {
  const { user } = client.getSession();
  if (!user) return;
  const rows = [
    ['Name', user.name],
    ['Email', `${user.email} (${user.emailVerified ? 'confirmed' : 'not confirmed'})`],
    ['Roles', user.roles.join(', ')],
    ['MFA', user.mfa.enabled ? user.mfa.methods.join(', ') : 'off'],
  ];
  $('me').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  const verify = $('verify-form');
  if (verify) verify.hidden = user.emailVerified;
  show('signed-in');
  mountMfa($('mfa'), ctx, user);
  mountInbox($('inbox'), ctx, user);
}

/** While a second step is on screen the page stays on it (its recovery codes included),
 *  whatever the session does meanwhile. */
let challenging = false;

/** Follows the session, whichever tab changed it: a sign-in or sign-out elsewhere shows here. */
function follow() {
  const session = client.getSession();
  if (session.status === 'loading') return;
  document.body.dataset.session = session.status === 'signed-in' ? 'signed-in' : 'signed-out';
  if (challenging) return;
  const view = document.body.dataset.view;
  if (session.status === 'signed-in' && view !== 'signed-in') showAccount();
  else if (session.status !== 'signed-in' && view === 'signed-in') {
    show('signed-out');
    status('Signed out.');
  }
}

async function completeLogin(result) {
  if (result.status === 'mfa-required') {
    show('pending');
    status('A second factor is needed.');
    challenging = true;
    try {
      await challenge($('mfa-challenge'), result, ctx);
    } catch (e) {
      show('signed-out');
      return status(e.message, true);
    } finally {
      challenging = false;
    }
  }
  status('Signed in.');
  if (document.body.dataset.view !== 'signed-in') showAccount();
  follow();
}

function onSubmit(id, handler) {
  $(id).addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      await handler(formJson(form), form);
    } catch (e) {
      status(e.message, true);
    } finally {
      button.disabled = false;
    }
  });
}

onSubmit('login-form', async ({ email, password }) => {
  const res = await attempt(client.logIn({ email, password }));
  if (!res.ok) return status(problemText(res), true);
  await completeLogin(res.body);
});

onSubmit('signup-form', async (json, form) => {
  const res = await attempt(client.signUp(json));
  if (!res.ok) return status(problemText(res), true);
  form.reset();
  $('login-form').elements.email.value = json.email;
  status('Account created: log in now.');
});

onSubmit('forgot-form', async (json) => {
  const res = await attempt(client.forgotPassword(json));
  status(res.ok ? 'If the address has an account, a reset code is on its way.' : problemText(res), !res.ok);
});

onSubmit('reset-form', async (json, form) => {
  const res = await attempt(client.resetPassword(json));
  if (!res.ok) return status(problemText(res), true);
  form.reset();
  status('Password changed: log in with the new one.');
});

$('verify-send').addEventListener('click', async () => {
  const res = await attempt(client.account.sendVerificationEmail());
  status(res.ok ? 'A confirmation code is on its way.' : problemText(res), !res.ok);
});

onSubmit('verify-form', async (json, form) => {
  const res = await attempt(client.account.verifyEmail(json));
  if (!res.ok) return status(problemText(res), true);
  form.reset();
  status('Email address confirmed.');
  showAccount();
});

$('logout').addEventListener('click', async () => {
  const res = await attempt(client.logOut());
  show('signed-out');
  status(res.ok ? 'Signed out.' : problemText(res), !res.ok);
});

/** A route switched off (SIGNUP=off, say) is missing from the OpenAPI document: its form goes. */
async function hideSwitchedOff() {
  const res = await attempt(client.fetch('/auth/openapi.json').then((r) => r.json()));
  if (!res.ok) return;
  const paths = res.body?.paths ?? {};
  if (!paths['/auth/signup']) $('signup-form').remove();
  if (!paths['/auth/verify-email']) $('verify-form').remove();
}

// A reload or a new tab restores the session silently (the cookie); then the page follows it.
show('signed-out');
client.subscribe(follow);
await Promise.all([hideSwitchedOff(), client.ready()]);
follow();
// Scripts and tests wait for this before they touch the page.
document.body.dataset.ready = 'true';
