import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGatehouse } from '../src/gatehouse.js';
import { silentLogger } from '../src/ports/logger.js';

describe('default logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('puts the ephemeral-key warning on stderr when the host passes no logger, and nothing routine', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const gh = createGatehouse({ issuer: 'https://gatehouse.test', audience: 'test' });
    const res = await gh.handle({ method: 'GET', path: '/auth/.well-known/jwks.json', headers: {} });
    expect(res?.status).toBe(200);
    await gh.close();
    const lines = warn.mock.calls.map(([l]) => JSON.parse(String(l)));
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        event: 'config_warning',
        reason: 'ephemeral_key',
        time: expect.any(String),
      }),
    );
    expect(log).not.toHaveBeenCalled();
    expect(info).not.toHaveBeenCalled();
  });

  it('stays quiet with silentLogger', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const gh = createGatehouse({ issuer: 'https://gatehouse.test', audience: 'test', logger: silentLogger });
    await gh.handle({ method: 'GET', path: '/auth/.well-known/jwks.json', headers: {} });
    await gh.close();
    expect(warn).not.toHaveBeenCalled();
  });
});
