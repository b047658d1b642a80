import type { Logger } from '../ports/logger.js';

/** The warning of an in-memory store that keeps at most `kept` records: logged when the store
 *  starts dropping (`dropping()`), and again only once it had room in between (`room()`), so a
 *  store at its cap logs once, not once per record. */
export function capWarning(logger: Logger | undefined, store: string, kept: number, msg: string) {
  let warned = false;
  return {
    dropping() {
      if (warned) return;
      warned = true;
      logger?.warn({ event: 'memory_store_cap', store, kept }, msg);
    },
    room() {
      warned = false;
    },
  };
}
