import type { MountedRoute } from './types.js';

export interface MatchedRoute {
  route: MountedRoute;
  params: Record<string, string>;
  /** Full path pattern, e.g. `/inbox/threads/:id`. */
  pattern: string;
}

interface Compiled {
  route: MountedRoute;
  pattern: string;
  segments: string[];
}

/** Static paths resolve with one Map lookup; parameterised ones by segment match. */
export class Router {
  /** Path -> method -> route: no key string is built per request. */
  private readonly exact = new Map<string, Map<string, MatchedRoute>>();
  private readonly dynamic: Compiled[] = [];

  add(route: MountedRoute): void {
    const { fullPath } = route;
    if (fullPath.includes(':')) {
      this.dynamic.push({ route, pattern: fullPath, segments: fullPath.split('/') });
    } else {
      const byMethod = this.exact.get(fullPath) ?? new Map<string, MatchedRoute>();
      byMethod.set(route.method, { route, params: {}, pattern: fullPath });
      this.exact.set(fullPath, byMethod);
    }
  }

  match(method: string, path: string): MatchedRoute | null {
    const hit = this.exact.get(path)?.get(method);
    if (hit) return hit;
    const parts = path.split('/');
    for (const c of this.dynamic) {
      if (c.route.method !== method || c.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const seg = c.segments[i]!;
        const part = parts[i]!;
        if (seg.startsWith(':')) {
          if (part === '' || part.length > 200) {
            ok = false;
            break;
          }
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            ok = false;
            break;
          }
        } else if (seg !== part) {
          ok = false;
          break;
        }
      }
      // A route that says which values its parameters take matches only those.
      if (ok && (!c.route.params || c.route.params.safeParse(params).success))
        return { route: c.route, params, pattern: c.pattern };
    }
    return null;
  }

  routes(): MatchedRoute[] {
    return [
      ...[...this.exact.values()].flatMap((byMethod) => [...byMethod.values()]),
      ...this.dynamic.map((c) => ({ route: c.route, params: {}, pattern: c.pattern })),
    ];
  }
}
