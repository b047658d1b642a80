// Extracts the fenced TypeScript and JavaScript samples of the documentation, so they can be
// type-checked (and some run) as a user would paste them. Used by scripts/consumer-check.mjs.
//
// Rules a sample follows (the errors below say them again to whoever breaks one):
// - A sample is a complete module: its imports, and every name it uses declared or imported.
// - A sample meant as a fragment says so on its first line, `// fragment: inside <frame>`,
//   and is checked inside scripts/doc-frames/<frame>.ts (where `/* fragment */` stands), which
//   declares the names the fragment may use.
// - `<!-- sample: <file> -->` on the line before the fence gives the sample a file name, so
//   another sample can import it (`./my-stores.js` from `my-stores.ts`) and the consumer check
//   can run it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const LANGS = { ts: 'ts', typescript: 'ts', js: 'mjs', javascript: 'mjs', mjs: 'mjs', cjs: 'cjs' };
const FRAGMENT = /^\/\/\s*fragment\b/;
const FRAGMENT_OK = /^\/\/ fragment: inside ([a-z0-9-]+)\s*$/;
const NAMED = /^<!--\s*sample:\s*([\w.-]+)\s*-->$/;
const SLOT = '/* fragment */';

/** The documents whose samples are checked, relative to `root`. */
export function documents(root) {
  const inDir = (dir, pick) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter(pick)
          .sort()
          .map((f) => `${dir}/${f}`)
      : [];
  return [
    'README.md',
    ...inDir('packages', (d) => existsSync(join(root, 'packages', d, 'README.md'))).map(
      (d) => `${d}/README.md`,
    ),
    ...inDir('docs', (f) => f.endsWith('.md')),
  ];
}

/** Every checked sample of every document: `{ doc, line, ext, code, name, frame }`, and the
 *  problems found while reading them (a fragment marker that names no frame, a duplicate name). */
export function extractSamples(root, framesDir = join(root, 'scripts/doc-frames')) {
  const samples = [];
  const problems = [];
  const frames = existsSync(framesDir)
    ? readdirSync(framesDir)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => f.slice(0, -3))
    : [];
  for (const doc of documents(root)) {
    const lines = readFileSync(join(root, doc), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\w+)\s*$/.exec(lines[i]);
      if (!open) {
        // A fence without a language: skip to its end so its content is not read as fences.
        if (lines[i].trim() === '```') {
          const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
          if (end > i) i = end;
        }
        continue;
      }
      const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
      if (end < 0) {
        problems.push(`${doc}:${i + 1}: a code fence that is never closed`);
        break;
      }
      const ext = LANGS[open[1].toLowerCase()];
      const body = lines.slice(i + 1, end);
      const at = i + 1;
      i = end;
      if (!ext) continue;
      const prev = lines
        .slice(0, at - 1)
        .reverse()
        .find((l) => l.trim() !== '');
      const name = prev && NAMED.exec(prev.trim())?.[1];
      const first = body[0] ?? '';
      let frame;
      if (FRAGMENT.test(first)) {
        frame = FRAGMENT_OK.exec(first)?.[1];
        if (!frame) {
          problems.push(
            `${doc}:${at + 1}: a fragment marker must read \`// fragment: inside <frame>\` (frames: ${frames.join(', ')})`,
          );
          continue;
        }
        if (!frames.includes(frame)) {
          problems.push(
            `${doc}:${at + 1}: no frame "${frame}": the frames are ${frames.join(', ')} ` +
              `(scripts/doc-frames/<frame>.ts, with ${SLOT} where the fragment goes; add one if none fits)`,
          );
          continue;
        }
      }
      samples.push({ doc, line: at + 1, ext, code: body.join('\n'), name, frame });
    }
  }
  const seen = new Map();
  for (const s of samples) {
    if (!s.name) continue;
    if (seen.has(s.name))
      problems.push(`${s.doc}:${s.line}: sample name ${s.name} is also used at ${seen.get(s.name)}`);
    seen.set(s.name, `${s.doc}:${s.line}`);
  }
  return { samples, problems, frames };
}

/** The file a sample is checked as: `{ file, text, offset }`, where `offset` is the number of
 *  lines before the sample's first line (to map compiler positions back to the document). */
export function materialize(sample, framesDir) {
  const slug = sample.doc.replace(/\.md$/, '').replace(/[^\w]+/g, '-');
  const file = sample.name ?? `${slug}-L${sample.line}.${sample.ext}`;
  // `export {}` keeps a sample without imports a module, so samples do not share one scope.
  if (!sample.frame) return { file, text: `${sample.code}\nexport {};\n`, offset: 0 };
  const frame = readFileSync(join(framesDir, `${sample.frame}.ts`), 'utf8');
  const at = frame.indexOf(SLOT);
  if (at < 0) throw new Error(`scripts/doc-frames/${sample.frame}.ts has no ${SLOT} slot`);
  const before = frame.slice(0, at);
  return {
    file,
    text: `${before}${sample.code}${frame.slice(at + SLOT.length)}\nexport {};\n`,
    offset: before.split('\n').length - 1,
  };
}
