/** Most message ids taken from one header. */
const MAX_IDS = 50;
/** Longest message id kept (a header line). */
const MAX_ID = 998;
/** An id in angle brackets, as RFC 5322 writes them. */
const BRACKETED = /<[^<>\s]{1,998}>/g;

/** A message id without angle brackets and white space; `null` when nothing is left. */
export function bareId(id: string): string | null {
  const s = id
    .trim()
    .replace(/^<+|>+$/g, '')
    .trim();
  return s && s.length <= MAX_ID && !/[\s<>]/.test(s) ? s : null;
}

/** What is left of a header outside quoted strings and (nested) comments: neither holds ids,
 *  though old-style `In-Reply-To` phrases put words and dates there. */
function outsideCommentsAndQuotes(text: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if ((quoted || depth > 0) && c === '\\') i++;
    else if (quoted) quoted = c !== '"';
    else if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (depth === 0 && c === '"') quoted = true;
    else if (depth === 0) out += c;
  }
  return out;
}

/** A bare token beside bracketed ids counts only when it looks like an id: an address-like
 *  `local@domain`, or a provider's id (8+ id characters with a digit, e.g. a UUID). */
const BARE_ID = /^(?:[^\s@]+@[^\s@]+|(?=[^\s]*\d)[A-Za-z0-9._=+-]{8,})$/;

/** Characters read of one header value, and header values read of a list: the start and the
 *  end (a long `References` is cut in the middle, as mail clients cut it). */
const MAX_TEXT = 20_000;
const MAX_PARTS = 200;

/** The start and the end of a long value, cut between ids (after a `>`, at white space or a
 *  comma), so no id is cut in two: ids may follow each other with nothing between them. */
function ends(part: string): string {
  const head = part.slice(0, 1000);
  const tail = part.slice(-(MAX_TEXT - 1000));
  const h = Math.max(head.lastIndexOf('>'), head.search(/[\s,][^\s,]*$/));
  const t = tail.search(/[\s,<]/);
  return `${h === -1 ? '' : head.slice(0, h + 1)} ${t === -1 ? '' : tail.slice(t)}`;
}

/** Message ids of an `In-Reply-To`/`References` value (a string, or several), without angle
 *  brackets, duplicates removed, at most 50: the first and the 49 newest. `References` names
 *  the thread's root first and the parent last (RFC 5322 3.6.4), and both are what threading
 *  looks for. A header with bracketed ids gives those, plus bare ids written beside them (a
 *  client that copies a provider's id as it is); one without any gives each white-space or
 *  comma separated token. */
export function parseIdList(value: unknown): string[] {
  const all = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  const parts = all.length <= MAX_PARTS ? all : [all[0]!, ...all.slice(-(MAX_PARTS - 1))];
  const out = new Set<string>();
  for (const part of parts) {
    const text = part.length <= MAX_TEXT ? part : ends(part);
    const bracketed = text.match(BRACKETED);
    const tokens = bracketed
      ? [
          ...bracketed,
          ...outsideCommentsAndQuotes(text.replace(BRACKETED, ' '))
            .split(/[\s,<>]+/)
            .filter((t) => BARE_ID.test(t)),
        ]
      : text.split(/[\s,]+/);
    for (const t of tokens) {
      const id = bareId(t);
      if (id) out.add(id);
    }
  }
  const ids = [...out];
  return ids.length <= MAX_IDS ? ids : [ids[0]!, ...ids.slice(ids.length - (MAX_IDS - 1))];
}

/** A header line's 998 characters (RFC 5322 2.1.1) less the field name: an id cannot be folded. */
const LINE = 998;
const IN_REPLY_TO_VALUE = LINE - 'In-Reply-To: '.length;
const REFERENCES_VALUE = LINE - 'References: '.length;

/** A message id a header Postern sends can carry as it is: printable ASCII, without the
 *  quotes, backslashes and parentheses that would turn the rest of the header into a quoted
 *  string or a comment (`<`, `>` never get this far), and `In-Reply-To: <id>` within one line. */
const SENDABLE_ID = /^[\x21\x23-\x27\x2a-\x5b\x5d-\x7e]+$/;

export const isSendableId = (id: string | null): id is string =>
  id !== null && id.length <= IN_REPLY_TO_VALUE - 2 && SENDABLE_ID.test(id);

/** Most ids a reply's `References` names. */
const MAX_REFERENCES = 20;

/** A `References` value of whole sendable ids, at most 20, on one header line (986 characters):
 *  the first (the thread's root) and as many of the newest as fit, as RFC 5322 3.6.4 asks of a
 *  shortened list. Empty when there is nothing to cite. */
export function referencesValue(ids: string[]): string {
  const all = [...new Set(ids.filter(isSendableId))].map((id) => `<${id}>`);
  const [root, ...rest] = all.length <= MAX_REFERENCES ? all : [all[0]!, ...all.slice(1 - MAX_REFERENCES)];
  if (root === undefined) return '';
  const newest: string[] = [];
  let length = root.length;
  for (let i = rest.length - 1; i >= 0 && length + 1 + rest[i]!.length <= REFERENCES_VALUE; i--) {
    length += 1 + rest[i]!.length;
    newest.unshift(rest[i]!);
  }
  // The newest id alone when it and the root do not fit together: it names the parent.
  if (rest.length > 0 && newest.length === 0) return rest.at(-1)!;
  return [root, ...newest].join(' ');
}

/** Matching keys of message ids: each id whole and by local part (before the last `@`),
 *  lower case. Two ids match when their key sets meet. Every local part counts, short ones too
 *  (there is no minimum length): a provider's short id must still meet the Message-ID that
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
