import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { ConfigError } from '@postern/core';
import { smtpMailer } from '@postern/core/mailers';
import { afterEach, expect, it } from 'vitest';
import { MailCatcher } from '../src/mail-catcher.js';

let catcher: MailCatcher | undefined;
afterEach(async () => {
  await catcher?.close();
  catcher = undefined;
});

/** Resolves on the server's final reply line `<code> ...` (multi-line replies use `<code>-`). */
function reply(socket: Socket, code: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (!new RegExp(`(^|\\r\\n)${code} [^\\r\\n]*\\r\\n$`).test(seen)) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve();
    };
    const onClose = () => reject(new Error(`connection closed before ${code}: ${seen}`));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

it('records a client resetting mid-mail instead of crashing, and keeps receiving mail', async () => {
  catcher = await MailCatcher.start();
  const { port } = new URL(catcher.url);
  const socket = connect(Number(port), '127.0.0.1');
  const greeting = reply(socket, '220');
  await once(socket, 'connect');
  await greeting;
  socket.write('EHLO client.test\r\n');
  await reply(socket, '250');
  socket.write('MAIL FROM:<someone@example.test>\r\n');
  await reply(socket, '250');
  // A reset inside a mail transaction is an error smtp-server emits (outside one it stays quiet).
  socket.resetAndDestroy();

  const deadline = Date.now() + 5000;
  while (catcher.errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(catcher.errors).toEqual([expect.objectContaining({ code: 'ECONNRESET' })]);

  const mailer = smtpMailer({ url: catcher.url, from: 'Postern <no-reply@postern.test>' });
  await mailer.send({ to: 'after@example.test', subject: 'Still here', text: 'hello' });
  expect((await catcher.waitFor('after@example.test')).subject).toBe('Still here');
});

it('smtpMailer throws the SMTP codes without the reply text (it quotes the recipient)', async () => {
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      callback(Object.assign(new Error(`<${address.address}> no such user`), { responseCode: 550 }));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  const mailer = smtpMailer({ url: `smtp://127.0.0.1:${port}`, from: 'Postern <no-reply@postern.test>' });
  try {
    const err = await mailer.send({ to: 'bob.secret@example.test', subject: 'x', text: 'y' }).then(
      () => null,
      (e: unknown) => e as Error & { responseCode?: number },
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.responseCode).toBe(550);
    expect(err!.message).toMatch(/^SMTP send failed \(.*550\)$/);
    expect(JSON.stringify({ message: err!.message, ...err })).not.toContain('bob.secret');
  } finally {
    mailer.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

it('smtpMailer refuses a URL nodemailer cannot use with a ConfigError that does not echo it', () => {
  for (const url of [
    'not-a-url',
    'http://127.0.0.1:2525',
    'smtp://:pw@',
    'mailto:a@b.test',
    'smtp:secret@x',
  ]) {
    let thrown: unknown;
    try {
      smtpMailer({ url, from: 'a@b.test' });
    } catch (e) {
      thrown = e;
    }
    expect(thrown, url).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).not.toContain(url);
  }
  smtpMailer({ url: 'smtps://user:pass@127.0.0.1:2525', from: 'a@b.test' }).close();
});

it('smtpMailer gives up on a server that stalls, after its timeouts, instead of holding the send', async () => {
  const { createServer } = await import('node:net');
  const held: Socket[] = [];
  // Accepts connections and never greets (a stalled relay).
  const server = createServer((s) => held.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const mailer = smtpMailer({
    url: `smtp://127.0.0.1:${port}`,
    from: 'Postern <no-reply@postern.test>',
    timeouts: { greetingMs: 300 },
  });
  try {
    const t0 = Date.now();
    await expect(mailer.send({ to: 'a@example.test', subject: 'x', text: 'y' })).rejects.toThrow(
      /^SMTP send failed \(ETIMEDOUT/,
    );
    expect(Date.now() - t0).toBeLessThan(5000);
  } finally {
    mailer.close();
    for (const s of held) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  expect(() => smtpMailer({ url: 'smtp://h:25', from: 'x@y.test', timeouts: { socketMs: 0 } })).toThrow(
    ConfigError,
  );
});
