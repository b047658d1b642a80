// `pnpm openapi`: writes docs/openapi.json, the document `GET /auth/openapi.json` serves with
// the default options (every route on, default mount points). A test keeps the file current.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createPostern } from '../packages/core/src/postern.js';

export const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/** The served document as committed: pretty-printed, newline at the end. */
export async function openApiText(): Promise<string> {
  const ph = createPostern({ issuer: 'https://app.example', audience: 'app' });
  const res = await ph.handle({ method: 'GET', path: '/auth/openapi.json', headers: {} });
  await ph.close();
  if (res?.status !== 200 || typeof res.body !== 'string') throw new Error('no OpenAPI document');
  return `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(OPENAPI_FILE, await openApiText());
  console.log(`wrote ${OPENAPI_FILE}`);
}
