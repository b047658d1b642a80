import { convert } from 'html-to-text';

/** Largest HTML converted to text; beyond it only the first part is read. */
const MAX_HTML = 2 * 1024 * 1024;

/** A plain-text rendering of an HTML body (links kept as text, images dropped). Never throws. */
export function htmlToText(html: string): string {
  try {
    return convert(html.slice(0, MAX_HTML), {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkIfSameAsText: true } },
      ],
    }).trim();
  } catch {
    return '';
  }
}
