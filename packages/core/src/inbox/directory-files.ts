import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FILE_KEY, type FileStore } from '../ports/file-store.js';

/** Attachment bytes as files in one local directory (created when missing). Keys are checked
 *  against `FILE_KEY`, so no name from a sender ever becomes a path. Writes go to a temporary
 *  file first and are renamed into place: a reader never sees half a file. */
export function directoryFiles(dir: string): FileStore {
  const root = resolve(dir);
  let ready: Promise<unknown> | undefined;
  const path = (key: string) => {
    if (!FILE_KEY.test(key)) throw new TypeError('invalid file key');
    return join(root, key);
  };
  return {
    async put(key, bytes) {
      const target = path(key);
      ready ??= mkdir(root, { recursive: true, mode: 0o700 });
      await ready;
      const tmp = join(root, `.tmp-${randomBytes(8).toString('hex')}`);
      try {
        await writeFile(tmp, bytes, { mode: 0o600, flag: 'wx' });
        await rename(tmp, target);
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
    },
    async get(key) {
      try {
        return new Uint8Array(await readFile(path(key)));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw e;
      }
    },
    async delete(key) {
      await rm(path(key), { force: true });
    },
  };
}
