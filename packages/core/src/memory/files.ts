import { FILE_KEY, type FileStore } from '../ports/file-store.js';

function checkKey(key: string): void {
  if (!FILE_KEY.test(key)) throw new TypeError('invalid file key');
}

/** Attachment bytes in memory: the default file port. One process only; bytes die with it.
 *  A real store keeps the bytes outside the process heap (disk, object storage), streams them
 *  rather than copying whole buffers, and writes a key once so a crash leaves no half file. */
export function memoryFiles(): FileStore {
  const files = new Map<string, Uint8Array>();
  return {
    async put(key, bytes) {
      checkKey(key);
      files.set(key, Uint8Array.from(bytes));
    },
    async get(key) {
      checkKey(key);
      const b = files.get(key);
      return b ? Uint8Array.from(b) : null;
    },
    async delete(key) {
      checkKey(key);
      files.delete(key);
    },
  };
}
