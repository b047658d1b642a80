import { convert } from 'html-to-text';

/** Largest HTML read for its text; beyond it only the first part is. */
const MAX_HTML = 2 * 1024 * 1024;
/** html-to-text's time grows faster than its input with deep nesting (seconds for 100,000
 *  nested tags in 300 KiB, minutes beyond) and runs on the event loop. It gets HTML up to this
 *  size and nesting depth, which real mail stays far below (Gmail clips at 102 KB): about
 *  0.1 s at worst. Anything else gets a plain linear tag strip. */
const CONVERT_MAX = 512 * 1024;
const CONVERT_MAX_DEPTH = 100;

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

/** Deepest element nesting, approximately (an end tag closes the innermost element), in one
 *  pass: every search moves forward only, so hostile input costs no more than its length. */
function nestingDepth(html: string, stopAt: number): number {
  let depth = 0;
  let max = 0;
  let gt = -1;
  for (let lt = html.indexOf('<'); lt !== -1; lt = html.indexOf('<', lt + 1)) {
    const name = tagAt(html, lt);
    if (!name || VOID.test(name)) continue;
    if (html[lt + 1] === '/') {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (gt !== Number.POSITIVE_INFINITY && gt < lt) {
      gt = html.indexOf('>', lt);
      if (gt === -1) gt = Number.POSITIVE_INFINITY;
    }
    if (html[gt - 1] === '/') continue;
    max = Math.max(max, ++depth);
    if (max > stopAt) return max;
  }
  return max;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,6});/gi, (m, e: string) => {
    if (e[0] !== '#') return ENTITIES[e.toLowerCase()] ?? m;
    const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : m;
  });
}

/** Text of any HTML in one pass: tags dropped (block ends as line breaks), script and style
 *  skipped, common entities decoded, white space collapsed. */
function stripTags(html: string): string {
  const lower = html.toLowerCase();
  const parts: string[] = [];
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      parts.push(html.slice(i));
      break;
    }
    parts.push(html.slice(i, lt));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end === -1 ? html.length : end + 3;
      continue;
    }
    const gt = html.indexOf('>', lt);
    if (gt === -1) break;
    const name = tagAt(html, lt)?.toLowerCase();
    i = gt + 1;
    if ((name === 'script' || name === 'style') && html[lt + 1] !== '/') {
      const end = lower.indexOf(`</${name}`, i);
      const close = end === -1 ? -1 : html.indexOf('>', end);
      i = close === -1 ? html.length : close + 1;
    } else if (name && BLOCK.test(name)) parts.push('\n');
  }
  return decodeEntities(parts.join(''))
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n[\n ]*/g, (m) => (m.split('\n').length > 2 ? '\n\n' : '\n'))
    .trim();
}

/** A plain-text rendering of an HTML body (links kept as text, images dropped), in time
 *  linear in its size whatever its shape. Never throws. */
export function htmlToText(html: string): string {
  const head = html.slice(0, MAX_HTML);
  try {
    if (head.length <= CONVERT_MAX && nestingDepth(head, CONVERT_MAX_DEPTH) <= CONVERT_MAX_DEPTH) {
      return convert(head, {
        wordwrap: false,
        selectors: [
          { selector: 'img', format: 'skip' },
          { selector: 'a', options: { hideLinkIfSameAsText: true } },
        ],
      }).trim();
    }
    return stripTags(head);
  } catch {
    return '';
  }
}
