import { describe, expect, it } from 'vitest';
import { dedupeIndex, seededHash } from '../../src/memory/dedupe-index.js';

/** An index over `keys[seq]`, as the outbox keeps keys on its events. */
function indexed(hash?: (key: string) => number) {
  const keys: (string | null)[] = [];
  const seqs = new Map<string, number>();
  const index = dedupeIndex((seq) => keys[seq] ?? null, hash);
  const add = (key: string) => {
    const seq = keys.length;
    const standing = index.getOrAdd(key, seq);
    if (standing === seq) {
      keys.push(key);
      seqs.set(key, seq);
    }
    return standing;
  };
  const remove = (key: string) => {
    const seq = seqs.get(key);
    if (seq === undefined) return index.delete(key, keys.length);
    // As the outbox's purge does: the event first, then its index entry.
    keys[seq] = null;
    seqs.delete(key);
    return index.delete(key, seq);
  };
  return { index, add, remove, keys };
}

describe('dedupeIndex', () => {
  it('answers the first sequence for a key added again', () => {
    const { add, index } = indexed();
    expect(add('webhook-id:a')).toBe(0);
    expect(add('webhook-id:b')).toBe(1);
    expect(add('webhook-id:a')).toBe(0);
    expect(index.size).toBe(2);
  });

  it('tells keys apart whose hashes collide, across growth, deletes and wrap-around', () => {
    // Three hashes only: long collision runs that wrap past the table's end.
    const { add, remove, index } = indexed((key) => [0xffffffff, 1023, 5][key.length % 3]!);
    const model = new Map<string, number>();
    let seed = 42;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (let step = 0; step < 6000; step++) {
      const key = `k${Math.floor(random() * 1500)}${'x'.repeat(Math.floor(random() * 3))}`;
      if (random() < 0.3) {
        expect(remove(key)).toBe(model.delete(key));
      } else {
        const seq = add(key);
        if (!model.has(key)) model.set(key, seq);
        expect(seq).toBe(model.get(key));
      }
      expect(index.size).toBe(model.size);
    }
    for (const [key, seq] of model) expect(add(key)).toBe(seq);
  });

  it('keeps every key through growth and shrinks once most are deleted', () => {
    const { add, remove, index } = indexed();
    const n = 20_000;
    for (let i = 0; i < n; i++) expect(add(`webhook-id:msg_${i}`)).toBe(i);
    for (let i = 0; i < n; i++) expect(add(`webhook-id:msg_${i}`)).toBe(i);
    for (let i = 0; i < n - 10; i++) expect(remove(`webhook-id:msg_${i}`)).toBe(true);
    expect(index.size).toBe(10);
    expect(remove('webhook-id:msg_0')).toBe(false);
    for (let i = n - 10; i < n; i++) expect(add(`webhook-id:msg_${i}`)).toBe(i);
    // A removed key is new again.
    expect(add('webhook-id:msg_0')).toBe(n);
  });

  it('spreads hashes by seed', () => {
    const a = seededHash(1);
    const b = seededHash(2);
    expect(a('webhook-id:x')).not.toBe(b('webhook-id:x'));
    expect(a('webhook-id:x')).toBe(a('webhook-id:x'));
    const low = new Set(Array.from({ length: 4096 }, (_, i) => a(`webhook-id:msg_${i}`) & 4095));
    // Sequential ids fill most buckets of a 4096-slot table (random: about 63 %).
    expect(low.size).toBeGreaterThan(2400);
  });
});
