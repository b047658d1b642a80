import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { MAX_QUOTE_DEPTH } from '../src/html-convert-worker.js';
import { htmlToText } from '../src/html-text.js';

describe('htmlToText', async () => {
  it('renders ordinary mail HTML with html-to-text: links as text, images dropped', async () => {
    const text = await htmlToText(
      '<p>Hello <b>Ann</b>,</p><p>see <a href="https://x.test/a">the order</a>.<img src="x.png" alt="logo"></p>',
    );
    expect(text).toBe('Hello Ann,\n\nsee the order [https://x.test/a].');
  });

  it('takes tag names named like Object.prototype members for tags (a Map, not an object)', async () => {
    const mail = (tag: string) => `<div><${tag}>see <a href="https://x.test/a">the order</a></${tag}></div>`;
    for (const tag of ['toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf']) {
      expect(await htmlToText(mail(tag))).toBe('see the order [https://x.test/a]');
    }
    // html-to-text itself throws on <constructor>: the strip still gives the text.
    expect(await htmlToText(mail('constructor'))).toBe('see the order');
  });

  it('strips hostile shapes in one pass instead of converting them', async () => {
    // Deep nesting costs html-to-text seconds to minutes (and then a RangeError): these go
    // through the linear strip and still give their text.
    const deep = (tag: string, n: number) => `${`<${tag}>`.repeat(n)}x${`</${tag}>`.repeat(n)}`;
    expect(await htmlToText(deep('div', 200_000))).toBe('x');
    expect(await htmlToText(`${'<b>'.repeat(300_000)}y`)).toBe('y');
    expect(await htmlToText(deep('ul', 101))).toBe('x');
    // Unmatched end tags close nothing and `<b/>` opens a <b> (as HTML parsers read them), so
    // these nest deep too; unterminated tags and a missing '>' do not make the scan quadratic.
    expect(await htmlToText(`${'<a></p>'.repeat(74_800)}z`)).toBe('z');
    expect(await htmlToText(`${'<div></x>'.repeat(58_000)}z`)).toBe('z');
    expect(await htmlToText(`${'<b/>'.repeat(131_000)}z`)).toBe('z');
    expect(await htmlToText(`${'<a'.repeat(500_000)}`)).toBe('');
    // End tags hidden in comments, attribute values or raw text close nothing, and inside
    // <foreignObject> a `/>` does not close: all of these still nest deep.
    expect(await htmlToText(`${'<b><!--</b>-->'.repeat(18_000)}z`)).toBe('z');
    expect(await htmlToText(`${'<i x=</i>'.repeat(29_000)}z`)).toBe('z');
    expect(await htmlToText(`${'<b a="</b>">'.repeat(20_000)}z`)).toBe('z');
    expect(await htmlToText(`${'<b><script></b></script>'.repeat(10_000)}z`)).toBe('z');
    expect(await htmlToText(`<svg><foreignObject>${'<b/>'.repeat(65_000)}z`)).toBe('z');
    // Sloppy but ordinary HTML (unclosed items, SVG) is not taken for deep nesting.
    const list = `<ul>${'<li>item'.repeat(500)}</ul>`;
    expect((await htmlToText(list)).split('\n')).toHaveLength(500);
    expect(await htmlToText(`<svg>${'<path d="M0"/>'.repeat(500)}</svg><p>after</p>`)).toBe('after');
  });

  it('the strip drops script, style and comments, decodes entities, keeps block breaks', async () => {
    const big = 'z'.repeat(600 * 1024);
    const text = await htmlToText(
      `<style>p{color:red}</style><div>Fish &amp; chips &#8364;5 &#x1F600;</div><!-- a > b --><script>alert(1)</script><p>next&nbsp;line</p><span>${big}</span>`,
    );
    expect(text).toMatch(/^Fish & chips €5 😀\n\nnext line\nz+$/u);
  });

  it('the strip keeps a < that starts no tag, and decodes named entities as a browser does', async () => {
    const pad = 'x'.repeat(600 * 1024);
    expect(
      await htmlToText(`<p>5 < 6 and caf&eacute; &mdash; d&uuml;rfen&hellip;</p><title>t</title>${pad}`),
    ).toBe(`5 < 6 and café — dürfen…\n${pad}`);
    // Every HTML5 name, and the legacy ones without their semicolon.
    expect(await htmlToText(`<p>&hearts; &frac12; &Omega; &amp &copy 1</p>${pad}`)).toBe(
      `♥ ½ Ω & © 1\n${pad}`,
    );
  });

  /** `unit` repeated after `prefix` up to 255 KiB: the shapes an audit sent as HTML-only mail. */
  const fill = (prefix: string, unit: string) =>
    prefix + unit.repeat(Math.floor((255 * 1024 - prefix.length) / unit.length));
  const hostile = {
    quotes: fill('<blockquote>'.repeat(99), '<p>x'),
    lists: fill('<ul>'.repeat(98), '<li>x'),
    paragraphs: fill('', '<p>x'),
  };

  it('keeps hostile shapes bounded: text never longer than the HTML, quoting cut off, the loop free', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    // A budget no loaded test machine runs over: the shapes are rendered by html-to-text here.
    const texts = await Promise.all(
      Object.values(hostile).map((html) => htmlToText(html, { timeoutMs: 60_000 })),
    );
    delay.disable();
    Object.values(hostile).forEach((html, i) => {
      expect(texts[i]!.length).toBeGreaterThan(0);
      expect(texts[i]!.length).toBeLessThanOrEqual(html.length);
    });
    // 99 levels of quoting used to prefix every line 99 times (25 MiB of text): now 10 at most.
    const deepest = Math.max(
      ...texts[0]!.split('\n').map((l) => /^(?:> ?)*/.exec(l)![0].split('>').length - 1),
    );
    expect(deepest).toBe(MAX_QUOTE_DEPTH);
    expect(texts[0]!.startsWith(`${'> '.repeat(MAX_QUOTE_DEPTH)}x`)).toBe(true);
    expect(texts[1]!.startsWith('* x')).toBe(true);
    // html-to-text ran on a worker thread: this thread answered its timers throughout (the
    // quotes alone held it for seconds before). A generous bound, not a benchmark.
    expect(delay.max / 1e6).toBeLessThan(1000);
  });

  it('abandons a conversion that outlives its budget (the worker is ended) and strips the mail', async () => {
    const text = await htmlToText(hostile.lists, { timeoutMs: 1 });
    // The strip's rendering (no list bullets), bounded like the conversion's.
    expect(text.startsWith('x\nx\n')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(hostile.lists.length);
    // The next mail gets a fresh worker.
    expect(await htmlToText('<p>Hello <b>Ann</b></p><blockquote>earlier</blockquote>')).toBe(
      'Hello Ann\n\n> earlier',
    );
  });

  it('never throws', async () => {
    expect(await htmlToText('')).toBe('');
    expect(typeof (await htmlToText('<<<>>>&#99999999;&#xD800;<script>'))).toBe('string');
    // Out-of-range and surrogate references become U+FFFD, as in a browser.
    expect(await htmlToText(`<p>${'<<<>>>&#99999999;&#xD800;'.repeat(30_000)}`)).toContain(
      '<<<>>>\uFFFD\uFFFD<<<',
    );
  });
});
