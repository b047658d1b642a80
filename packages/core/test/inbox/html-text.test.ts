import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../src/inbox/html-text.js';

describe('htmlToText', () => {
  it('renders ordinary mail HTML with html-to-text: links as text, images dropped', () => {
    const text = htmlToText(
      '<p>Hello <b>Ann</b>,</p><p>see <a href="https://x.test/a">the order</a>.<img src="x.png" alt="logo"></p>',
    );
    expect(text).toBe('Hello Ann,\n\nsee the order [https://x.test/a].');
  });

  it('takes tag names named like Object.prototype members for tags (a Map, not an object)', () => {
    const mail = (tag: string) => `<div><${tag}>see <a href="https://x.test/a">the order</a></${tag}></div>`;
    for (const tag of ['toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf']) {
      expect(htmlToText(mail(tag))).toBe('see the order [https://x.test/a]');
    }
    // html-to-text itself throws on <constructor>: the strip still gives the text.
    expect(htmlToText(mail('constructor'))).toBe('see the order');
  });

  it('strips hostile shapes in one pass instead of converting them', () => {
    // Deep nesting costs html-to-text seconds to minutes (and then a RangeError): these go
    // through the linear strip and still give their text.
    const deep = (tag: string, n: number) => `${`<${tag}>`.repeat(n)}x${`</${tag}>`.repeat(n)}`;
    expect(htmlToText(deep('div', 200_000))).toBe('x');
    expect(htmlToText(`${'<b>'.repeat(300_000)}y`)).toBe('y');
    expect(htmlToText(deep('ul', 101))).toBe('x');
    // Unmatched end tags close nothing and `<b/>` opens a <b> (as HTML parsers read them), so
    // these nest deep too; unterminated tags and a missing '>' do not make the scan quadratic.
    expect(htmlToText(`${'<a></p>'.repeat(74_800)}z`)).toBe('z');
    expect(htmlToText(`${'<div></x>'.repeat(58_000)}z`)).toBe('z');
    expect(htmlToText(`${'<b/>'.repeat(131_000)}z`)).toBe('z');
    expect(htmlToText(`${'<a'.repeat(500_000)}`)).toBe('');
    // End tags hidden in comments, attribute values or raw text close nothing, and inside
    // <foreignObject> a `/>` does not close: all of these still nest deep.
    expect(htmlToText(`${'<b><!--</b>-->'.repeat(18_000)}z`)).toBe('z');
    expect(htmlToText(`${'<i x=</i>'.repeat(29_000)}z`)).toBe('z');
    expect(htmlToText(`${'<b a="</b>">'.repeat(20_000)}z`)).toBe('z');
    expect(htmlToText(`${'<b><script></b></script>'.repeat(10_000)}z`)).toBe('z');
    expect(htmlToText(`<svg><foreignObject>${'<b/>'.repeat(65_000)}z`)).toBe('z');
    // Sloppy but ordinary HTML (unclosed items, SVG) is not taken for deep nesting.
    const list = `<ul>${'<li>item'.repeat(500)}</ul>`;
    expect(htmlToText(list).split('\n')).toHaveLength(500);
    expect(htmlToText(`<svg>${'<path d="M0"/>'.repeat(500)}</svg><p>after</p>`)).toBe('after');
  });

  it('the strip drops script, style and comments, decodes entities, keeps block breaks', () => {
    const big = 'z'.repeat(600 * 1024);
    const text = htmlToText(
      `<style>p{color:red}</style><div>Fish &amp; chips &#8364;5 &#x1F600;</div><!-- a > b --><script>alert(1)</script><p>next&nbsp;line</p><span>${big}</span>`,
    );
    expect(text).toMatch(/^Fish & chips €5 😀\n\nnext line\nz+$/u);
  });

  it('the strip keeps a < that starts no tag, and decodes named entities as a browser does', () => {
    const pad = 'x'.repeat(600 * 1024);
    expect(htmlToText(`<p>5 < 6 and caf&eacute; &mdash; d&uuml;rfen&hellip;</p><title>t</title>${pad}`)).toBe(
      `5 < 6 and café — dürfen…\n${pad}`,
    );
    // Every HTML5 name, and the legacy ones without their semicolon.
    expect(htmlToText(`<p>&hearts; &frac12; &Omega; &amp &copy 1</p>${pad}`)).toBe(`♥ ½ Ω & © 1\n${pad}`);
  });

  it('never throws', () => {
    expect(htmlToText('')).toBe('');
    expect(typeof htmlToText('<<<>>>&#99999999;&#xD800;<script>')).toBe('string');
    // Out-of-range and surrogate references become U+FFFD, as in a browser.
    expect(htmlToText(`<p>${'<<<>>>&#99999999;&#xD800;'.repeat(30_000)}`)).toContain('<<<>>>\uFFFD\uFFFD<<<');
  });
});
