/**
 * `@postern/core/internal`: what the other Postern packages (the Express and Fastify adapters,
 * the Postgres stores, the test kit) share with the core and a host app has no use for. Not
 * part of the public API: it changes with the packages that use it, in any release. Hosts use
 * the root, `/ports`, `/webhook`, `/memory` and `/mailers`.
 * @internal
 * @module
 */

/** @internal The `clientError` listener the adapters hand on to hosts. */
export { problemClientError } from './http/client-error.js';
/** @internal The route table's shape (the test kit generates requests from it); a mounted
 *  route is a `RouteDef` with its area, library and full path. */
export type { Area, MountedRoute, Reply, RouteContext, RouteDef } from './http/types.js';
/** @internal What a log line says about a caught value and what lies under it. */
export { causeMessage, errorMessage } from './util/error-message.js';
