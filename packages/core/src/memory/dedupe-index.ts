import { randomBytes } from 'node:crypto';

/** 32-bit FNV-1a over the UTF-16 code units, seeded, then murmur3's finaliser so linear probing
 *  sees well-spread low bits. */
export function seededHash(seed: number): (key: string) => number {
  return (key) => {
    let h = (0x811c9dc5 ^ seed) >>> 0;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
}

const MIN_CAPACITY = 1024;

/** Dedupe key -> event sequence for the in-memory outbox, in one Int32Array of (hash, seq + 1)
 *  pairs with linear probing. Why not a `Map<string, number>`: at the hundreds of thousands of
 *  keys an outbox holds, every Map lookup and insert missed the cache several times (its chains
 *  and each stored key string), and each doubling re-read every key string for its hash; a
 *  webhook's dedupe check cost as much as its HMAC. Here a probe is one cache line, growth reads
 *  only this array, and the keys themselves stay with their events: `keyOf(seq)` confirms a
 *  hash match (new keys almost never meet one). The per-store random seed keeps collisions
 *  unpredictable; the keys come from authenticated senders anyway. */
export function dedupeIndex(
  keyOf: (seq: number) => string | null,
  hash = seededHash(randomBytes(4).readUInt32LE()),
) {
  let capacity = MIN_CAPACITY;
  /** slots[2i] = hash, slots[2i + 1] = seq + 1 (0: empty). */
  let slots = new Int32Array(capacity * 2);
  let size = 0;

  /** The slot of `key` (of its entry for `seq`, when given), or the empty slot ending its probe
   *  run (negated, minus one). No closure per call: this runs on every webhook. */
  const probe = (h: number, key: string, seq = -1): number => {
    const mask = capacity - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const stored = slots[2 * i + 1]! - 1;
      if (stored === -1) return -i - 1;
      if (slots[2 * i] === (h | 0) && (seq === -1 ? keyOf(stored) === key : stored === seq)) return i;
    }
  };

  const resize = (to: number) => {
    const old = slots;
    capacity = to;
    slots = new Int32Array(capacity * 2);
    const mask = capacity - 1;
    for (let j = 0; j < old.length; j += 2) {
      if (old[j + 1] === 0) continue;
      let i = old[j]! & mask;
      while (slots[2 * i + 1] !== 0) i = (i + 1) & mask;
      slots[2 * i] = old[j]!;
      slots[2 * i + 1] = old[j + 1]!;
    }
  };

  return {
    get size() {
      return size;
    },
    /** Stores `key -> seq` unless `key` is there; answers the sequence that stands (one probe
     *  sequence for the check and the insert). */
    getOrAdd(key: string, seq: number): number {
      const h = hash(key);
      const i = probe(h, key);
      if (i >= 0) return slots[2 * i + 1]! - 1;
      const at = -i - 1;
      slots[2 * at] = h;
      slots[2 * at + 1] = seq + 1;
      // Load factor at most 1/2: probe sequences stay a cache line or two.
      if (++size * 2 > capacity) resize(capacity * 2);
      return seq;
    },
    /** Removes the entry `key -> seq` (matched by its sequence, so the event may already be
     *  gone); later entries of its probe run move back (no tombstones). */
    delete(key: string, seq: number): boolean {
      let i = probe(hash(key), key, seq);
      if (i < 0) return false;
      const mask = capacity - 1;
      for (let j = (i + 1) & mask; slots[2 * j + 1] !== 0; j = (j + 1) & mask) {
        const home = slots[2 * j]! & mask;
        // Move j into the hole at i unless its home lies cyclically in (i, j].
        if (i <= j ? home > i && home <= j : home > i || home <= j) continue;
        slots[2 * i] = slots[2 * j]!;
        slots[2 * i + 1] = slots[2 * j + 1]!;
        i = j;
      }
      slots[2 * i] = 0;
      slots[2 * i + 1] = 0;
      // Memory follows the live keys once most are purged (a quarter full after halving).
      if (--size * 8 < capacity && capacity > MIN_CAPACITY) resize(capacity / 2);
      return true;
    },
  };
}
