// The demo page's shell: sign-up, login, forgot/reset, account. MFA and inbox live in
// mfa.js and inbox.js, each mounted into its own section with the same context.
import { api, h, problemText, refresh, session } from './api.js';
import { mountInbox } from './inbox.js';
import { challenge, mountMfa } from './mfa.js';

const $ = (id) => document.getElementById(id);

function status(message, isError = false) {
  $('status').textContent = message;
  $('status').className = isError ? 'error' : '';
}

/** What mfa.js and inbox.js get: talk to the API, build elements, report, re-render. */
const ctx = { api, session, h, problemText, status, refreshAccount: () => showAccount() };

function show(state) {
  for (const el of document.querySelectorAll('[data-when]')) el.hidden = el.dataset.when !== state;
  document.body.dataset.view = state;
}

function formJson(form) {
  const data = Object.fromEntries(new FormData(form));
  for (const el of form.querySelectorAll('input[type=checkbox]')) data[el.name] = el.checked;
  return data;
}

async function showAccount() {
  const res = await api('/auth/me');
  if (!res.ok) return status(problemText(res), true);
  const { user } = res.body;
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

async function completeLogin(answer) {
  if (answer.mfaRequired) {
    show('pending');
    status('A second factor is needed.');
    try {
      answer = await challenge($('mfa-challenge'), answer, ctx);
    } catch (e) {
      show('signed-out');
      return status(e.message, true);
    }
  }
  session.set(answer);
  status('Signed in.');
  await showAccount();
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

onSubmit('login-form', async (json) => {
  const res = await api('/auth/login', { json, auth: false });
  if (!res.ok) return status(problemText(res), true);
  await completeLogin(res.body);
});

onSubmit('signup-form', async (json, form) => {
  const res = await api('/auth/signup', { json, auth: false });
  if (!res.ok) return status(problemText(res), true);
  form.reset();
  $('login-form').elements.email.value = json.email;
  status('Account created: log in now.');
});

onSubmit('forgot-form', async (json) => {
  const res = await api('/auth/forgot', { json, auth: false });
  status(res.ok ? 'If the address has an account, a reset code is on its way.' : problemText(res), !res.ok);
});

onSubmit('reset-form', async (json, form) => {
  const res = await api('/auth/forgot-reset', { json, auth: false });
  if (!res.ok) return status(problemText(res), true);
  form.reset();
  status('Password changed: log in with the new one.');
});

$('verify-send').addEventListener('click', async () => {
  const res = await api('/auth/verify-email/send', { method: 'POST' });
  status(res.ok ? 'A confirmation code is on its way.' : problemText(res), !res.ok);
});

onSubmit('verify-form', async (json, form) => {
  const res = await api('/auth/verify-email', { json });
  if (!res.ok) return status(problemText(res), true);
  form.reset();
  status('Email address confirmed.');
  await showAccount();
});

$('logout').addEventListener('click', async () => {
  const refreshToken = session.refreshToken();
  if (refreshToken) await api('/auth/logout', { json: { refreshToken }, auth: false });
  session.clear();
  show('signed-out');
  status('Signed out.');
});

/** A route switched off (SIGNUP=off, say) is missing from the OpenAPI document: its form goes. */
async function hideSwitchedOff() {
  const res = await api('/auth/openapi.json', { auth: false });
  if (!res.ok) return;
  const paths = res.body?.paths ?? {};
  if (!paths['/auth/signup']) $('signup-form').remove();
  if (!paths['/auth/verify-email']) $('verify-form').remove();
}

// A reload keeps the session when this tab holds a refresh token.
show('signed-out');
await hideSwitchedOff();
if (await refresh()) await showAccount();
// Scripts and tests wait for this before they touch the page.
document.body.dataset.ready = 'true';
