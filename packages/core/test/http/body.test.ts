import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isPosternError } from '../../src/errors.js';
import { readBody } from '../../src/http/body.js';

// Edge cases of reading a Node request stream that the HTTP contract suites cannot reach:
// the stream's state when Postern gets it depends on what the host ran first.

const headers = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' };
const codeOf = (e: unknown) => (isPosternError(e) ? e.code : e);
/** A stream body always comes back as a promise (bytes at hand come back as they are). */
const read100 = (s: Readable) => {
  const r = readBody(s, headers, 100);
  if (!(r instanceof Promise)) throw new Error('expected a promise for a stream');
  return r;
};

describe('readBody on Node streams', () => {
  it('reads every chunk, strings included', async () => {
    const s = new PassThrough();
    const read = read100(s);
    s.write('{"a":');
    s.end(Buffer.from('1}'));
    expect(Buffer.from(await read).toString()).toBe('{"a":1}');
  });

  it('reads a stream a host paused before handing it over', async () => {
    const s = new PassThrough();
    s.pause();
    s.end('{"paused":true}');
    const read = read100(s);
    expect(Buffer.from(await read).toString()).toBe('{"paused":true}');
  });

  it('refuses, and does not hang on, a stream destroyed before reading began', async () => {
    const s = new PassThrough();
    s.destroy();
    await new Promise((r) => setImmediate(r)); // its 'close' has fired: nobody will hear it again
    await expect(read100(s).catch(codeOf)).resolves.toBe('validation_failed');
  });

  it('says what failed in a validation_failed refusal (errors[])', async () => {
    const s = new PassThrough();
    s.destroy();
    await new Promise((r) => setImmediate(r));
    const err = await read100(s).catch((e: unknown) => e);
    expect(isPosternError(err) && err.errors).toEqual([
      { path: '/', message: 'The request body could not be read' },
    ]);
  });

  it('refuses a stream that errors mid-body, and survives a later error', async () => {
    const s = new PassThrough();
    const read = read100(s).catch(codeOf);
    s.write('{"a":');
    s.destroy(new Error('client went away'));
    await expect(read).resolves.toBe('validation_failed');
    expect(() => s.emit('error', new Error('late'))).not.toThrow();
  });

  it('answers 413 for a body over the limit once the rest is drained', async () => {
    const s = Readable.from([Buffer.alloc(60), Buffer.alloc(60), Buffer.alloc(60)], { objectMode: false });
    await expect(read100(s).catch(codeOf)).resolves.toBe('payload_too_large');
    expect(s.readableEnded).toBe(true);
  });

  it('returns nothing for a stream that already ended', async () => {
    const s = new PassThrough();
    s.end();
    s.resume();
    await new Promise((r) => s.once('end', r));
    expect((await read100(s)).byteLength).toBe(0);
  });
});
