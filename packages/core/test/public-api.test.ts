import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as root from '@postern/core';
import { createPostern, PosternError, posternProblem, silentLogger } from '@postern/core';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The markdown a host reads: the READMEs and docs/ (decision records describe the packages
 *  from the inside and are left out). */
function hostDocs(): string[] {
  const files = ['README.md', ...readdirSync(join(repo, 'packages')).map((p) => `packages/${p}/README.md`)];
  for (const f of readdirSync(join(repo, 'docs'))) if (f.endsWith('.md')) files.push(`docs/${f}`);
  return files.filter((f) => {
    try {
      readFileSync(join(repo, f));
      return true;
    } catch {
      return false;
    }
  });
}

/** Source files of the example apps: host code like a reader's own. */
function exampleSources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(repo, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      else if (/\.(ts|tsx|mjs|js)$/.test(entry.name)) out.push(path);
    }
  };
  walk('examples');
  return out;
}

describe('the public API of @postern/core', () => {
  it('the root holds at most 30 runtime values, none of them internal wiring', () => {
    const values = Object.keys(root);
    expect(values.length).toBeLessThanOrEqual(30);
    for (const name of ['requireFreshAuth', 'mfaSummary', 'toProblem', 'problemResponse', 'validate'])
      expect(values).not.toContain(name);
  });

  it('MFA flows are on ph.mfa only, and ph.auth has one token check', async () => {
    const ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'postern-test',
      logger: silentLogger,
    });
    for (const name of ['verifyMfa', 'totpSetup', 'enrolTotpSetup', 'disableMfaMethod']) {
      expect(ph.mfa).toHaveProperty(name);
      expect(ph.auth).not.toHaveProperty(name);
    }
    expect(ph.auth).toHaveProperty('verifyAccessToken');
    expect(ph.auth).not.toHaveProperty('verifyAuthorization');
    await expect(ph.mfa.summary('nobody')).resolves.toEqual({ enabled: false, methods: [] });
    await ph.close();
  });

  it('posternProblem answers a PosternError a host makes, and nothing that is not Postern’s', () => {
    const out = posternProblem(new PosternError('not_found'));
    expect(out.status).toBe(404);
    expect(out.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(String(out.body))).toMatchObject({ code: 'not_found', status: 404 });
    expect(posternProblem(new Error('a bug'))).toBeNull();
  });

  it('no README, docs page or example imports @postern/core/internal', () => {
    const files = [...hostDocs(), ...exampleSources()];
    expect(files.length).toBeGreaterThan(5);
    const users = files.filter((f) => readFileSync(join(repo, f), 'utf8').includes('@postern/core/internal'));
    expect(users).toEqual([]);
  });
});
