import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../src/ports/logger.js';
import { createPostern } from '../src/postern.js';

describe('default logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('puts the ephemeral-key warning on stderr when the host passes no logger, and nothing routine', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const ph = createPostern({ issuer: 'https://postern.test', audience: 'test' });
    const res = await ph.handle({ method: 'GET', path: '/auth/.well-known/jwks.json', headers: {} });
    expect(res?.status).toBe(200);
    await ph.close();
    const lines = warn.mock.calls.map(([l]) => JSON.parse(String(l)));
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        event: 'config_warning',
        reason: 'ephemeral_key',
        time: expect.any(Number),
      }),
    );
    expect(log).not.toHaveBeenCalled();
    expect(info).not.toHaveBeenCalled();
  });

  it('warns on stderr when a mail is dropped for want of a mailer', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const ph = createPostern({ issuer: 'https://postern.test', audience: 'test' });
    await ph.auth.signup({
      name: 'Ann',
      email: 'ann@example.test',
      password: 'violet-otter-jumps-gravel-1987',
    });
    await ph.auth.forgot({ email: 'ann@example.test' });
    const dropped = () =>
      warn.mock.calls.map(([l]) => JSON.parse(String(l))).find((l) => l.event === 'mail_dropped');
    for (let i = 0; i < 100 && !dropped(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(dropped()).toMatchObject({ level: 'warn', msg: expect.any(String) });
    expect(JSON.stringify(warn.mock.calls)).not.toContain('ann@example.test');
    await ph.close();
  });

  it('stays quiet with silentLogger', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const ph = createPostern({ issuer: 'https://postern.test', audience: 'test', logger: silentLogger });
    await ph.handle({ method: 'GET', path: '/auth/.well-known/jwks.json', headers: {} });
    await ph.close();
    expect(warn).not.toHaveBeenCalled();
  });
});
