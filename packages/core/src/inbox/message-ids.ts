/** Most message ids taken from one header. */
const MAX_IDS = 50;
/** Longest message id kept (a header line). */
const MAX_ID = 998;

/** A message id without angle brackets and white space; `null` when nothing is left. */
export function bareId(id: string): string | null {
  const s = id
    .trim()
    .replace(/^<+|>+$/g, '')
    .trim();
  return s && s.length <= MAX_ID && !/[\s<>]/.test(s) ? s : null;
}

/** Message ids of an `In-Reply-To`/`References` value (a string, or several), without angle
 *  brackets, duplicates removed, at most 50. */
export function parseIdList(value: unknown): string[] {
  const parts = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  const out = new Set<string>();
  for (const part of parts) {
    // Comments are not ids. Bracketed ids and bare ones may be mixed (a client that writes a
    // provider's id as it is beside the usual `<...>` ones): both count.
    const text = part.slice(0, 20_000).replace(/\([^()]*\)/g, ' ');
    for (const t of text.match(/<[^<>\s]{1,998}>|[^\s,<>]+/g) ?? []) {
      const id = bareId(t);
      if (id) out.add(id);
      if (out.size >= MAX_IDS) return [...out];
    }
  }
  return [...out];
}

/** Matching keys of message ids: each id whole and by local part (before the last `@`),
 *  lower case. Two ids match when their key sets meet. Every local part counts, short ones too
 *  (CONTRACT.md 4.4 sets no minimum): a provider's short id must still meet the Message-ID that
 *  carries it, and only outbound messages of the same account are ever compared. */
export function threadKeys(ids: Array<string | null | undefined>): string[] {
  const keys = new Set<string>();
  for (const raw of ids) {
    const id = raw ? bareId(raw) : null;
    if (!id) continue;
    const lower = id.toLowerCase();
    keys.add(lower);
    const at = lower.lastIndexOf('@');
    if (at > 0) keys.add(lower.slice(0, at));
  }
  return [...keys];
}
