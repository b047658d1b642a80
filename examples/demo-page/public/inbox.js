// Inbox part of the demo page. Gets the context of app.js:
// { client, attempt, h, problemText, status, refreshAccount }.
// Everything in a mail (sender, subject, text, file names) is set as text, never as HTML.
// Mail HTML is shown only inside a sandboxed iframe (srcdoc, sandbox="" : no scripts, no
// forms, an opaque origin), so it never runs at this page's origin.
/** Policy written into every mail HTML document on top of the page's own (which it inherits):
 *  no scripts, no remote images (tracking pixels), inline styles allowed for layout. */
const MAIL_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:";

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');
const sizeText = (n) =>
  n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;

/** A sandboxed, script-less frame showing one mail's HTML. */
function mailFrame(h, html) {
  const frame = h('iframe', {
    sandbox: '',
    referrerpolicy: 'no-referrer',
    title: 'Message (HTML)',
    loading: 'lazy',
    class: 'mail-html',
  });
  // srcdoc as a property: the HTML is data for the frame, never parsed into this document.
  frame.srcdoc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${MAIL_CSP}">${html}`;
  frame.style.width = '100%';
  frame.style.minHeight = '16rem';
  frame.style.border = '1px solid #8884';
  return frame;
}

/** Saves an attachment: fetched with the Bearer token, handed to the browser as a download. */
async function save(ctx, attachment) {
  const res = await ctx.attempt(ctx.client.inbox.attachment(attachment.id));
  if (!res.ok) return ctx.status('The attachment could not be downloaded.', true);
  const { blob } = res.body;
  // octet-stream: the browser saves the bytes, whatever type the sender claimed.
  const url = URL.createObjectURL(new Blob([blob], { type: 'application/octet-stream' }));
  const a = ctx.h('a', { href: url, download: attachment.filename || 'attachment' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function messageView(ctx, m) {
  const { h } = ctx;
  const meta = [
    ['From', m.from],
    ['To', m.to.join(', ')],
    m.cc.length ? ['Cc', m.cc.join(', ')] : null,
    [m.direction === 'inbound' ? 'Received' : 'Sent', when(m.receivedAt)],
    m.direction === 'outbound'
      ? ['Status', m.status + (m.openedAt ? `, opened ${when(m.openedAt)}` : '')]
      : null,
  ].filter(Boolean);
  const parts = [
    h('h4', {}, m.subject || '(no subject)'),
    h('dl', { class: 'mail-meta' }, ...meta.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
  ];
  if (m.html) {
    const text = h('pre', { class: 'mail-text', hidden: true }, m.text);
    const frame = mailFrame(h, m.html);
    const toggle = h('button', { type: 'button' }, 'Show plain text');
    toggle.addEventListener('click', () => {
      text.hidden = !text.hidden;
      frame.hidden = !frame.hidden;
      toggle.textContent = text.hidden ? 'Show plain text' : 'Show HTML (sandboxed)';
    });
    parts.push(frame, text, toggle);
  } else {
    parts.push(h('pre', { class: 'mail-text' }, m.text));
  }
  if (m.attachments.length) {
    parts.push(
      h(
        'ul',
        { class: 'attachments' },
        ...m.attachments.map((a) =>
          h(
            'li',
            {},
            h('button', { type: 'button', onclick: () => save(ctx, a) }, `Download ${a.filename}`),
            ` ${a.contentType}, ${sizeText(a.size)}`,
          ),
        ),
      ),
    );
  }
  return h('article', { class: `mail ${m.direction}` }, ...parts);
}

/** One thread and its reply form; `onReply` runs after a reply went out (the list moves). */
async function showThread(ctx, pane, threadId, onReply) {
  const { client, attempt, h, problemText } = ctx;
  const res = await attempt(client.inbox.thread(threadId));
  if (!res.ok) return ctx.status(problemText(res), true);
  const { thread, messages } = res.body;
  const text = h('textarea', { name: 'text', rows: 5, required: true, maxlength: 100000 });
  const send = h('button', { type: 'submit' }, 'Send reply');
  const form = h('form', { class: 'reply' }, h('label', {}, 'Reply ', text), send);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    send.disabled = true;
    try {
      const r = await attempt(client.inbox.reply(threadId, { text: text.value }));
      if (!r.ok) return ctx.status(problemText(r), true);
      // The thread and the list show the reply before the status says so.
      await Promise.all([showThread(ctx, pane, threadId, onReply), onReply()]);
      ctx.status('Reply sent.');
    } finally {
      send.disabled = false;
    }
  });
  pane.replaceChildren(
    h('h3', {}, thread.subject || '(no subject)'),
    ...messages.map((m) => messageView(ctx, m)),
    form,
  );
}

async function showAccount(ctx, pane, account) {
  const { client, attempt, h, problemText } = ctx;
  const list = h('ul', { class: 'threads' });
  const threadPane = h('div', { class: 'thread' });
  const more = h('button', { type: 'button', hidden: true }, 'Older threads');
  const reload = h('button', { type: 'button' }, 'Check for new mail');
  let cursor = null;
  /** Bumped by firstPage: an older page still loading then adds nothing to the new list. */
  let generation = 0;

  async function loadPage() {
    const mine = generation;
    const res = await attempt(client.inbox.threads(account.id, cursor ? { cursor } : {}));
    if (mine !== generation) return;
    if (!res.ok) return ctx.status(problemText(res), true);
    for (const t of res.body.threads) {
      const open = h('button', { type: 'button' }, t.subject || '(no subject)');
      open.addEventListener('click', () => showThread(ctx, threadPane, t.id, firstPage));
      list.append(h('li', {}, open, ` ${t.messageCount} message(s), ${when(t.lastMessageAt)}`));
    }
    if (!list.children.length) list.append(h('li', {}, 'No mail yet.'));
    cursor = res.body.nextCursor;
    more.hidden = !cursor;
  }
  /** The list from the newest thread again (new mail, a reply moved a thread up). */
  async function firstPage() {
    generation += 1;
    cursor = null;
    list.replaceChildren();
    await loadPage();
  }
  more.addEventListener('click', loadPage);
  reload.addEventListener('click', firstPage);

  const parts = [h('h3', {}, `${account.name} <${account.address}> (${account.role})`), reload, list, more];
  if (account.role === 'owner') {
    const email = h('input', { name: 'email', type: 'email', required: true, maxlength: 254 });
    const role = h(
      'select',
      { name: 'role' },
      h('option', { value: 'member' }, 'member'),
      h('option', { value: 'owner' }, 'owner'),
    );
    const form = h(
      'form',
      { class: 'inline-form' },
      h('label', {}, 'Add member ', email),
      role,
      h('button', { type: 'submit' }, 'Add'),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const res = await attempt(
        client.inbox.addMember(account.id, { email: email.value.trim(), role: role.value }),
      );
      ctx.status(res.ok ? 'Member added.' : problemText(res), !res.ok);
      if (res.ok) form.reset();
    });
    parts.push(form);
  }
  pane.replaceChildren(...parts, threadPane);
  await firstPage();
}

/** Inbox accounts, threads and replies for a signed-in user, rendered into <section id="inbox">. */
export async function mountInbox(section, ctx, _user) {
  const { client, attempt, h, problemText } = ctx;
  const accounts = h('ul', { class: 'accounts' });
  const pane = h('div', { class: 'inbox-account' });

  async function loadAccounts() {
    const res = await attempt(client.inbox.accounts());
    if (!res.ok) return ctx.status(problemText(res), true);
    accounts.replaceChildren(
      ...res.body.map((a) => {
        const open = h('button', { type: 'button' }, `${a.name} <${a.address}>`);
        open.addEventListener('click', () => showAccount(ctx, pane, a));
        return h('li', {}, open, ` ${a.role}`);
      }),
    );
    if (!res.body.length) accounts.append(h('li', {}, 'No inbox account yet.'));
  }

  const address = h('input', { name: 'address', type: 'email', required: true, maxlength: 254 });
  const name = h('input', { name: 'name', required: true, maxlength: 200 });
  const create = h(
    'form',
    { class: 'inline-form' },
    h('label', {}, 'Address ', address),
    h('label', {}, 'Name ', name),
    h('button', { type: 'submit' }, 'Create inbox account'),
  );
  create.addEventListener('submit', async (event) => {
    event.preventDefault();
    const res = await attempt(
      client.inbox.createAccount({ address: address.value.trim(), name: name.value.trim() }),
    );
    if (!res.ok) return ctx.status(problemText(res), true);
    create.reset();
    ctx.status('Inbox account created.');
    await loadAccounts();
    await showAccount(ctx, pane, res.body);
  });

  section.replaceChildren(h('h2', {}, 'Inbox'), accounts, create, pane);
  await loadAccounts();
}
