import { get, type IncomingMessage } from 'node:http';
import { listen } from '@postern/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicHttpsGet, responseOf } from '../../src/inbox/public-fetch.js';

let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  server = await listen((req, res) => {
    if (req.url === '/empty') return res.writeHead(204).end();
    if (req.url === '/weird') return res.writeHead(799).end('x');
    res.writeHead(200, { 'content-type': 'application/pdf', 'set-cookie': ['a=1', 'b=2'] });
    res.end(Buffer.from([1, 2, 3, 4]));
  });
});
afterAll(() => server.close());

const answer = (path: string) =>
  new Promise<IncomingMessage>((resolve, reject) => get(server.url + path, resolve).once('error', reject));

describe('responseOf', () => {
  it('turns a node:http answer into a Response with its status, headers and streamed body', async () => {
    const r = responseOf(await answer('/file'));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/pdf');
    expect(r.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(new Uint8Array(await r.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3, 4]));
    const empty = responseOf(await answer('/empty'));
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('throws for a status a Response cannot carry (the caller turns it into a provider error)', async () => {
    const res = await answer('/weird');
    expect(() => responseOf(res)).toThrow(RangeError);
    res.destroy();
  });
});

describe('publicHttpsGet', () => {
  it('refuses anything but https, and a loopback listener before connecting', async () => {
    const signal = AbortSignal.timeout(5000);
    await expect(publicHttpsGet(new URL(`${server.url}/file`), { headers: {}, signal })).rejects.toThrow(
      'https only',
    );
    const port = new URL(server.url).port;
    await expect(
      publicHttpsGet(new URL(`https://127.0.0.1:${port}/file`), { headers: {}, signal }),
    ).rejects.toMatchObject({ code: 'ENOTPUBLIC' });
  });
});
