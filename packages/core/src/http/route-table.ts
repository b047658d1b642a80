import type { Area, MountedRoute, RouteDef, RouteTable } from './types.js';

/** A declaration helper typed for one library: each route's `operationId` must name one of
 *  the functions of `F`, and its handler's body is typed by its `body` schema. */
export const routeOf =
  <F>() =>
  <B>(def: RouteDef<B, Extract<keyof F, string>>): RouteDef<B, Extract<keyof F, string>> =>
    def;

function joinPath(base: string, path: string): string {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  return path === '/' ? b || '/' : `${b}${path}`;
}

/** Every route of the tables under its area's mount point. */
export function mountRoutes(tables: readonly RouteTable[], base: Record<Area, string>): MountedRoute[] {
  return tables.flatMap((t) =>
    t.routes.map((route) => ({
      ...route,
      area: t.area,
      library: t.library,
      fullPath: joinPath(base[t.area], route.path),
    })),
  );
}
