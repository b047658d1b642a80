import type { Clock } from '../ports/clock.js';
import type { LimiterRecord, LimiterStore } from '../ports/limiter-store.js';

/** Fixed-window counters in a Map; ended windows are swept now and then. */
export function memoryLimiterStore(clock: Clock): LimiterStore {
  const counters = new Map<string, { points: number; resetAt: number }>();
  let writes = 0;

  const live = (key: string, now: Date) => {
    const c = counters.get(key);
    return c && now.getTime() < c.resetAt ? c : undefined;
  };
  const out = (c: { points: number; resetAt: number }): LimiterRecord => ({
    points: c.points,
    resetAt: new Date(c.resetAt),
  });

  return {
    async consume(key, points, durationMs, now) {
      let c = live(key, now);
      if (points < 0) {
        if (!c) return { points: 0, resetAt: new Date(now) };
        c.points = Math.max(0, c.points + points);
        return out(c);
      }
      if (c) c.points += points;
      else {
        c = { points, resetAt: now.getTime() + durationMs };
        counters.set(key, c);
      }
      if (++writes % 1024 === 0) {
        const t = clock.now().getTime();
        for (const [k, v] of counters) if (v.resetAt <= t) counters.delete(k);
      }
      return out(c);
    },
    async get(key, now) {
      const c = live(key, now);
      return c ? out(c) : null;
    },
    async delete(key) {
      counters.delete(key);
    },
  };
}
