import { decodeHTML } from 'entities';
import { convertOffThread } from './html-convert-worker.js';

/** Largest HTML read for its text; beyond it only the first part is. The strip below runs on
 *  the event loop, about 0.1 s per MiB of the dearest shapes. */
const MAX_HTML = 1024 * 1024;
/** html-to-text's time grows faster than its input with deep nesting (seconds for 100,000
 *  nested tags in 300 KiB, minutes beyond). It gets HTML up to this size and nesting depth,
 *  which real mail stays far below (Gmail clips at 102 KB), on a worker thread with a time
 *  budget. Anything else gets a one-pass tag strip. */
const CONVERT_MAX = 256 * 1024;
const CONVERT_MAX_DEPTH = 100;
/** Time html-to-text gets for one mail (a normal one takes 10-20 ms); past it the worker is
 *  ended and the mail gets the strip. */
export const CONVERT_BUDGET_MS = 2000;

/** Elements that never have an end tag, so they do not nest. */
const VOID = /^(?:area|base|br|col|embed|hr|img|input|link|meta|param|source|track|wbr|!|\?)$/i;
/** Elements whose end starts a new line in the stripped text. */
const BLOCK = /^(?:br|p|div|tr|li|h[1-6]|table|blockquote|pre|ul|ol|hr|section|article|header|footer)$/i;

/** The name of the tag that starts at `lastIndex` (sticky: no slice per tag). */
const TAG_NAME = /<\/?([A-Za-z][A-Za-z0-9-]*|!|\?)/y;
function tagAt(html: string, lt: number): string | undefined {
  TAG_NAME.lastIndex = lt;
  return TAG_NAME.exec(html)?.[1];
}

/** Open elements an opening tag closes first, as HTML parsers do (`<li>` after `<li>`). A Map:
 *  tag names come from the mail, and `<constructor>` must not reach Object.prototype. */
const CLOSED_BY = new Map<string, readonly string[]>([
  ['li', ['li']],
  ['p', ['p']],
  ['tr', ['tr', 'td', 'th']],
  ['td', ['td', 'th']],
  ['th', ['td', 'th']],
  ['dt', ['dt', 'dd']],
  ['dd', ['dt', 'dd']],
  ['option', ['option']],
]);
/** Openings that end an open paragraph. */
const ENDS_P =
  /^(?:address|article|aside|blockquote|div|dl|fieldset|footer|form|h[1-6]|header|hr|main|nav|ol|p|pre|section|table|ul)$/;

/** Elements whose content is raw text up to their end tag (no tags inside). */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'xmp', 'iframe', 'noembed', 'noframes']);
/** Where SVG or MathML content switches back to HTML (there `/>` does not close). */
const HTML_IN_FOREIGN = new Set(['foreignobject', 'desc', 'title', 'mi', 'mo', 'mn', 'ms', 'mtext']);

/** End of the tag that starts at `lt`: the first `>` outside a quoted attribute value, or -1. */
function tagEnd(html: string, lt: number): number {
  let quote = '';
  for (let i = lt + 1; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i;
  }
  return -1;
}

interface Tag {
  /** Lower case. */
  name: string;
  closing: boolean;
  /** Written with `/>`. */
  selfClosing: boolean;
}

/** Walks `html` in one forward pass as an HTML tokenizer reads it: comments are skipped, a `<`
 *  that starts no tag is text, quoted attribute values may hold `<` and `>`, and a tag cut off
 *  by the end ends the walk. `text(from, to)` gets what lies between tags. `visit` gets each
 *  tag and may answer `'raw'` (the element just opened holds raw text: skip to its end tag) or
 *  `'stop'`. The position only moves on, so hostile input costs no more than its length. */
function scanTags(
  html: string,
  visit: (tag: Tag) => 'raw' | 'stop' | undefined,
  text: (from: number, to: number) => void = () => {},
): void {
  let lower: string | undefined;
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      text(i, html.length);
      return;
    }
    text(i, lt);
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      if (end === -1) return;
      i = end + 3;
      continue;
    }
    const name = tagAt(html, lt)?.toLowerCase();
    if (!name) {
      text(lt, lt + 1);
      i = lt + 1;
      continue;
    }
    const gt = tagEnd(html, lt);
    if (gt === -1) return;
    i = gt + 1;
    const next = visit({ name, closing: html[lt + 1] === '/', selfClosing: html[gt - 1] === '/' });
    if (next === 'stop') return;
    if (next === 'raw') {
      lower ??= html.toLowerCase();
      const end = lower.indexOf(`</${name}`, i);
      if (end === -1) return;
      i = end;
    }
  }
}

/** True when the element tree nests deeper than `limit`, built the way an HTML parser builds
 *  it: raw-text content (script, style, title, ...) holds no tags, an end tag closes up to its
 *  open element and is ignored without one, and `/>` closes only SVG or MathML content. The
 *  stack never holds more than `limit + 1` elements. */
function nestsDeeperThan(html: string, limit: number): boolean {
  const stack: Array<{ name: string; foreign: boolean }> = [];
  const open = new Map<string, number>();
  const pop = () => {
    const { name } = stack.pop()!;
    open.set(name, open.get(name)! - 1);
    return name;
  };
  let deeper = false;
  scanTags(html, ({ name, closing, selfClosing }) => {
    if (closing) {
      if (open.get(name)) while (pop() !== name);
      return;
    }
    if (VOID.test(name)) return;
    const inForeign = stack.at(-1)?.foreign ?? false;
    const foreign = name === 'svg' || name === 'math' || (inForeign && !HTML_IN_FOREIGN.has(name));
    if (foreign && selfClosing) return;
    if (RAW_TEXT.has(name) && !inForeign) return 'raw';
    const top = stack.at(-1)?.name;
    if (top && (CLOSED_BY.get(name)?.includes(top) || (top === 'p' && ENDS_P.test(name)))) pop();
    stack.push({ name, foreign });
    open.set(name, (open.get(name) ?? 0) + 1);
    deeper = stack.length > limit;
    return deeper ? 'stop' : undefined;
  });
  return deeper;
}

/** Elements whose content is not text of the mail. */
const SKIPPED = new Set(['script', 'style', 'head', 'title', 'template']);

/** Text of any HTML in one pass: tags dropped (block ends as line breaks), script, style and
 *  head skipped, comments too, entities decoded as a browser does, white space collapsed. A `<` that
 *  starts no tag is text. */
function stripTags(html: string): string {
  const parts: string[] = [];
  scanTags(
    html,
    ({ name, closing }) => {
      if (!closing && SKIPPED.has(name)) return 'raw';
      if (BLOCK.test(name)) parts.push('\n');
      return undefined;
    },
    (from, to) => parts.push(html.slice(from, to)),
  );
  return decodeHTML(parts.join(''))
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n[\n ]*/g, (m) => (m.split('\n').length > 2 ? '\n\n' : '\n'))
    .trim();
}

/** The first `MAX_HTML` characters, without a tag the cut left open (`</di` is no text). */
function headOf(html: string): string {
  if (html.length <= MAX_HTML) return html;
  const head = html.slice(0, MAX_HTML);
  const lt = head.lastIndexOf('<');
  return lt > head.lastIndexOf('>') ? head.slice(0, lt) : head;
}

/** A plain-text rendering of an HTML body (links kept as text, images dropped, quoting cut
 *  off after a few levels), never longer than the HTML it was read from. html-to-text runs
 *  on a worker thread within `timeoutMs`; HTML too large or too deep for it, or a conversion
 *  that fails or runs over, gets the one-pass strip (linear in its size, on this thread).
 *  Never throws. */
export async function htmlToText(html: string, opts: { timeoutMs?: number } = {}): Promise<string> {
  const head = headOf(html);
  try {
    if (head.length <= CONVERT_MAX && !nestsDeeperThan(head, CONVERT_MAX_DEPTH)) {
      const text = await convertOffThread(head, {
        maxLength: head.length,
        timeoutMs: opts.timeoutMs ?? CONVERT_BUDGET_MS,
      });
      if (text !== null) return text.slice(0, head.length);
    }
  } catch {
    // A shape the depth check did not foresee: the strip still gives the text.
  }
  try {
    return stripTags(head);
  } catch {
    return '';
  }
}
