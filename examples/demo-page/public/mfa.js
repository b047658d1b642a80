// MFA part of the demo page. Both functions get the context of app.js:
// { client, attempt, h, problemText, status, refreshAccount }. Passkeys go through the
// client, which loads the WebAuthn helpers on first use.
import { encode } from './vendor/uqr.js';

const SVG = 'http://www.w3.org/2000/svg';
const NAMES = { totp: 'Authenticator app', email: 'Email codes', webauthn: 'Passkeys' };

/** A QR code of `text` as inline SVG (no image URLs, so the page's CSP stays strict). */
function qrSvg(text) {
  const { size, data } = encode(text, { ecc: 'M', border: 2 });
  let d = '';
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) if (data[y][x]) d += `M${x} ${y}h1v1h-1z`;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('width', '192');
  svg.setAttribute('height', '192');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'QR code for your authenticator app');
  svg.setAttribute('shape-rendering', 'crispEdges');
  const bg = document.createElementNS(SVG, 'rect');
  for (const [k, v] of Object.entries({ width: size, height: size, fill: '#fff' }))
    bg.setAttribute(k, String(v));
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(bg, path);
  return svg;
}

/** A one-field form; `onSubmit(value)` runs with the button disabled. */
function fieldForm(
  h,
  { label, name = 'code', type = 'text', button, autocomplete = 'one-time-code', onSubmit },
) {
  const input = h('input', {
    name,
    type,
    required: true,
    maxlength: type === 'password' ? 128 : 64,
    autocomplete,
  });
  const submit = h('button', { type: 'submit' }, button);
  const form = h('form', { class: 'inline-form' }, h('label', {}, `${label} `, input), submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      await onSubmit(input.value.trim(), form);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

/** Shows the recovery codes once, with the advice to keep them. */
function recoveryBlock(h, codes) {
  return h(
    'div',
    { class: 'recovery-codes' },
    h(
      'p',
      {},
      'Recovery codes: each works once when your other methods are not at hand. Keep them safe now; they are not shown again.',
    ),
    h(
      'ol',
      {},
      codes.map((c) => h('li', {}, h('code', {}, c))),
    ),
  );
}

/** Enrolment for a signed-in user (TOTP, email, passkeys, recovery codes), rendered into
 *  <section id="mfa">. Called after every sign-in with the user of GET /auth/me. */
export function mountMfa(section, ctx, user) {
  const { client, attempt, h, problemText, status, refreshAccount } = ctx;
  const enabled = new Set(user.mfa.methods);
  const area = h('div');

  /** Runs `call(password?)`; after a 403 reauth_required it asks for the password and retries. */
  async function withReauth(place, call) {
    const res = await attempt(call(undefined));
    if (res.code !== 'reauth_required') return res;
    return new Promise((resolve) => {
      const form = fieldForm(h, {
        label: 'Confirm your password',
        name: 'password',
        type: 'password',
        autocomplete: 'current-password',
        button: 'Confirm',
        onSubmit: async (password) => {
          form.remove();
          resolve(await attempt(call(password)));
        },
      });
      place.append(form);
    });
  }

  function done(res, message, place) {
    if (!res.ok) {
      status(problemText(res), true);
      return false;
    }
    status(message);
    if (res.body?.recoveryCodes) {
      section.replaceChildren(h('h2', {}, 'Two-step sign-in'), recoveryBlock(h, res.body.recoveryCodes));
      section.append(h('button', { type: 'button', onclick: () => refreshAccount() }, 'I saved them'));
      return true;
    }
    if (place) place.replaceChildren();
    refreshAccount();
    return true;
  }

  /** Removal always asks for the password; `remove({ password })` is the client call. */
  function removeButton(place, label, remove) {
    return h(
      'button',
      {
        type: 'button',
        onclick: () =>
          place.replaceChildren(
            fieldForm(h, {
              label: 'Password',
              name: 'password',
              type: 'password',
              autocomplete: 'current-password',
              button: label,
              onSubmit: async (password) => {
                done(await attempt(remove({ password })), 'Removed.', place);
              },
            }),
          ),
      },
      label,
    );
  }

  /** A button that starts a code-confirmed enrolment: the setup call (with the password when
   *  the login is old), then `started` as status, `intro` of its answer and a form for the
   *  first code. */
  function setupButton(place, text, { setup, confirm, intro = () => [], started, label, turnedOn }) {
    return h(
      'button',
      {
        type: 'button',
        onclick: async (event) => {
          const button = event.currentTarget;
          const res = await withReauth(place, (password) => setup(password ? { password } : undefined));
          if (!res.ok) return status(problemText(res), true);
          button.hidden = true;
          if (started) status(started);
          place.replaceChildren(
            ...intro(res.body),
            fieldForm(h, {
              label,
              button: 'Turn on',
              onSubmit: async (code) => done(await attempt(confirm({ code })), turnedOn, place),
            }),
          );
        },
      },
      text,
    );
  }

  // --- authenticator app (TOTP) ---
  const totpPlace = h('div');
  const totp = h('div', { class: 'mfa-method' }, h('h3', {}, NAMES.totp), totpPlace);
  if (enabled.has('totp')) {
    totp.append(
      h('p', {}, 'On.'),
      removeButton(totpPlace, 'Remove the authenticator app', (p) => client.mfa.remove('totp', p)),
    );
  } else {
    totp.append(
      setupButton(totpPlace, 'Set up an authenticator app', {
        setup: client.mfa.totpSetup,
        confirm: client.mfa.totpConfirm,
        intro: (body) => [
          h('p', {}, 'Scan this with your authenticator app, or type the key by hand:'),
          qrSvg(body.otpauthUri),
          h('p', {}, h('code', { class: 'secret' }, body.secret.replace(/(.{4})/g, '$1 ').trim())),
        ],
        label: 'Code from the app',
        turnedOn: 'Authenticator app on.',
      }),
    );
  }

  // --- email codes ---
  const emailPlace = h('div');
  const email = h('div', { class: 'mfa-method' }, h('h3', {}, NAMES.email), emailPlace);
  if (enabled.has('email')) {
    email.append(
      h('p', {}, `On: codes go to ${user.email}.`),
      removeButton(emailPlace, 'Stop email codes', (p) => client.mfa.remove('email', p)),
    );
  } else {
    email.append(
      h('p', {}, 'The weakest second step: whoever reads your mail can use it.'),
      setupButton(emailPlace, 'Use email codes', {
        setup: client.mfa.emailSetup,
        confirm: client.mfa.emailConfirm,
        started: `A code was mailed to ${user.email}.`,
        label: 'Code from the mail',
        turnedOn: 'Email codes on.',
      }),
    );
  }

  // --- passkeys ---
  const keysPlace = h('div');
  const list = h('ul');
  const keys = h('div', { class: 'mfa-method' }, h('h3', {}, NAMES.webauthn), list, keysPlace);
  attempt(client.mfa.passkeys()).then((res) => {
    if (!res.ok) return;
    list.replaceChildren(
      ...res.body.map((c) => {
        const place = h('span');
        return h(
          'li',
          {},
          `${c.name} (added ${new Date(c.createdAt).toLocaleDateString()}) `,
          removeButton(place, 'Remove', (p) => client.mfa.removePasskey(c.id, p)),
          place,
        );
      }),
    );
  });
  keys.append(
    h(
      'button',
      {
        type: 'button',
        onclick: async () => {
          const name = navigator.platform || 'Passkey';
          const res = await withReauth(keysPlace, (password) => client.passkey.register({ name, password }));
          if (!res.ok && !res.code) return status(`Passkey not added: ${res.error.message}`, true);
          done(res, 'Passkey added.', keysPlace);
        },
      },
      'Add a passkey',
    ),
  );

  // --- recovery codes ---
  const recoveryPlace = h('div');
  const recovery = h('div', { class: 'mfa-method' }, h('h3', {}, 'Recovery codes'), recoveryPlace);
  if (user.mfa.enabled) {
    recovery.append(
      h(
        'button',
        {
          type: 'button',
          onclick: () =>
            recoveryPlace.replaceChildren(
              fieldForm(h, {
                label: 'Password',
                name: 'password',
                type: 'password',
                autocomplete: 'current-password',
                button: 'Make new codes (the old ones stop working)',
                onSubmit: async (password) => {
                  const res = await attempt(client.mfa.recoveryCodes({ password }));
                  if (!res.ok) return status(problemText(res), true);
                  recoveryPlace.replaceChildren(recoveryBlock(h, res.body.recoveryCodes));
                  status('New recovery codes made.');
                },
              }),
            ),
        },
        'New recovery codes',
      ),
    );
  } else {
    recovery.append(h('p', {}, 'You get them with your first method.'));
  }

  area.append(totp, email, keys, recovery);
  section.replaceChildren(
    h('h2', {}, 'Two-step sign-in'),
    h('p', {}, user.mfa.enabled ? `On: ${user.mfa.methods.map((m) => NAMES[m]).join(', ')}.` : 'Off.'),
    area,
  );
}

/** Second step of a login the client answered with { status: 'mfa-required', methods, enrol? },
 *  rendered into <section id="mfa-challenge">. Resolves once a factor verifies (the client is
 *  signed in then). */
export function challenge(section, pending, ctx) {
  const { client, attempt, h, problemText, status } = ctx;
  return new Promise((resolve, reject) => {
    const finish = (answer) => {
      section.replaceChildren();
      resolve(answer);
    };
    const fail = (message) => {
      section.replaceChildren();
      reject(new Error(message));
    };
    /** Success ends the login; a dead pending token ends the attempt; a wrong code stays. */
    const handle = (res) => {
      if (res.ok) return finish(res.body);
      if (res.code === 'invalid_token') return fail('This sign-in expired or was used up: log in again.');
      // An authenticator code is accepted once: right after a login, the same code fails.
      const hint =
        res.code === 'invalid_code' && pending.methods.includes('totp')
          ? ' (an authenticator code works once: if you just used it, wait for the next one)'
          : '';
      status(problemText(res) + hint, true);
    };
    const codeForm = (label, method) =>
      fieldForm(h, {
        label,
        button: 'Continue',
        onSubmit: async (code) => handle(await attempt(client.verify({ method, code }))),
      });

    if (pending.methods.length === 0 && pending.enrol) {
      section.replaceChildren(...enrolAtLogin(ctx, pending, handle, finish, fail));
      section.hidden = false;
      return;
    }

    const parts = [h('h2', {}, 'Second step')];
    if (pending.methods.includes('webauthn')) {
      parts.push(
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              const res = await attempt(client.passkey.logIn());
              if (!res.ok && !res.code) return status(`Passkey not used: ${res.error.message}`, true);
              handle(res);
            },
          },
          'Use a passkey',
        ),
      );
    }
    if (pending.methods.includes('totp')) {
      parts.push(codeForm('Code from your authenticator app', 'totp'));
    }
    if (pending.methods.includes('email')) {
      const onlyEmail = !pending.methods.some((m) => m === 'totp' || m === 'webauthn');
      parts.push(
        h('p', {}, onlyEmail ? 'We mailed you a six-digit code.' : 'Or get a code by mail.'),
        codeForm('Code from the mail', 'email'),
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              const res = await attempt(client.resendCode());
              if (res.ok) status('A new code is on its way; the previous one no longer works.');
              else handle(res);
            },
          },
          onlyEmail ? 'Send a new code' : 'Mail me a code',
        ),
      );
    }
    if (pending.methods.includes('recovery')) {
      parts.push(
        h('details', {}, h('summary', {}, 'Use a recovery code'), codeForm('Recovery code', 'recovery')),
      );
    }
    parts.push(h('button', { type: 'button', onclick: () => fail('Sign-in cancelled.') }, 'Cancel'));
    section.replaceChildren(...parts);
    section.hidden = false;
  });
}

/** `mfa.required` and no method yet: the pending token enrols a first one, which completes the
 *  login; the recovery codes are shown before the session starts. */
function enrolAtLogin(ctx, pending, handle, finish, fail) {
  const { client, attempt, h, status } = ctx;
  const place = h('div');
  const enrolled = (res) => {
    if (!res.ok) return handle(res);
    place.replaceChildren(
      recoveryBlock(h, res.body.recoveryCodes ?? []),
      h('button', { type: 'button', onclick: () => finish(res.body) }, 'I saved them: continue'),
    );
  };
  const parts = [
    h('h2', {}, 'Set up a second step'),
    h('p', {}, 'This site asks every account for a second sign-in step. Set one up to continue.'),
  ];
  if (pending.enrol.includes('webauthn')) {
    parts.push(
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            const res = await attempt(client.enrol.passkey({ name: navigator.platform || 'Passkey' }));
            if (!res.ok && !res.code) return status(`Passkey not added: ${res.error.message}`, true);
            enrolled(res);
          },
        },
        'Add a passkey',
      ),
    );
  }
  if (pending.enrol.includes('totp')) {
    parts.push(
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            const res = await attempt(client.enrol.totpSetup());
            if (!res.ok) return handle(res);
            place.replaceChildren(
              h('p', {}, 'Scan this with your authenticator app, or type the key by hand:'),
              qrSvg(res.body.otpauthUri),
              h('p', {}, h('code', { class: 'secret' }, res.body.secret.replace(/(.{4})/g, '$1 ').trim())),
              fieldForm(h, {
                label: 'Code from the app',
                button: 'Turn on',
                onSubmit: async (code) => enrolled(await attempt(client.enrol.totpConfirm({ code }))),
              }),
            );
          },
        },
        'Set up an authenticator app',
      ),
    );
  }
  if (pending.enrol.includes('email')) {
    parts.push(
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            const res = await attempt(client.enrol.emailSetup());
            if (!res.ok) return handle(res);
            status('A code is on its way to your mailbox.');
            place.replaceChildren(
              fieldForm(h, {
                label: 'Code from the mail',
                button: 'Turn on',
                onSubmit: async (code) => enrolled(await attempt(client.enrol.emailConfirm({ code }))),
              }),
            );
          },
        },
        'Use email codes',
      ),
    );
  }
  parts.push(place, h('button', { type: 'button', onclick: () => fail('Sign-in cancelled.') }, 'Cancel'));
  return parts;
}
