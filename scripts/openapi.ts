// `pnpm openapi`: writes docs/openapi.json, the document `GET /auth/openapi.json` serves with
// the default options (every route on, default mount points).
import { writeFile } from 'node:fs/promises';
import { createGatehouse } from '../packages/core/src/gatehouse.js';

const gh = createGatehouse({ issuer: 'https://app.example', audience: 'app' });
const res = await gh.handle({ method: 'GET', path: '/auth/openapi.json', headers: {} });
await gh.close();
if (res?.status !== 200 || typeof res.body !== 'string') throw new Error('no OpenAPI document');
const out = new URL('../docs/openapi.json', import.meta.url);
await writeFile(out, `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`);
console.log(`wrote ${out.pathname}`);
