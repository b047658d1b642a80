import { openApiRoute } from '../http/openapi.js';
import type { MountedRoute, RouteTable } from '../http/types.js';
import { jwksAnswer } from './schemas.js';

/** The routes under the auth mount point that run no library function: the keys that verify
 *  access tokens, and the OpenAPI document of every route (`routes`: the instance's table). */
export function housekeepingRoutes(
  jwks: () => Promise<unknown>,
  routes: () => readonly MountedRoute[],
): RouteTable {
  return {
    area: 'auth',
    library: null,
    routes: [
      {
        method: 'GET',
        path: '/.well-known/jwks.json',
        operationId: 'jwks',
        auth: 'none',
        summary: 'Public keys that verify access tokens (empty for HS256)',
        storeless: true,
        responses: { 200: { description: 'JWK set', schema: jwksAnswer } },
        handler: async () => ({ status: 200, body: await jwks() }),
      },
      openApiRoute(routes),
    ],
  };
}
