import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Blockquotes nested deeper than this are still block breaks but add no further `> `: each
 *  level re-prefixes every line inside it, so 99 levels made 25 MiB of text from 255 KiB. */
export const MAX_QUOTE_DEPTH = 10;
/** A worker idle this long ends (its heap is freed); the next mail starts another. */
const IDLE_MS = 30_000;
/** Heap of the worker: a conversion that needs more ends it, and the mail gets the strip. */
const WORKER_HEAP_MB = 128;

/** html-to-text's options, as data (they cross to the worker thread). */
const OPTIONS = {
  wordwrap: false,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { hideLinkIfSameAsText: true } },
  ],
};

/** The worker, as CommonJS source: a file of its own would not be found once the package is
 *  bundled, and the tests run the TypeScript sources. It loads html-to-text from the path the
 *  host resolved, with html-to-text's blockquote formatter made to stop quoting at
 *  `maxQuoteDepth`, converts one mail per message and cuts the text to `maxLength` before it
 *  is copied back. */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { compile } = require(workerData.library);
const { maxQuoteDepth } = workerData;
function quoteDepth(elem) {
  let depth = 0;
  for (let e = elem; e; e = e.parent) if (e.name === 'blockquote') depth++;
  return depth;
}
function blockquote(elem, walk, builder, options) {
  const quoted = quoteDepth(elem) <= maxQuoteDepth;
  builder.openBlock({ leadingLineBreaks: options.leadingLineBreaks || 2, reservedLineLength: quoted ? 2 : 0 });
  walk(elem.children, builder);
  builder.closeBlock({
    trailingLineBreaks: options.trailingLineBreaks || 2,
    blockTransform: quoted
      ? (s) => s.replace(/^\\n+|\\n+$/g, '').split('\\n').map((line) => '> ' + line).join('\\n')
      : undefined,
  });
}
const convert = compile({ ...workerData.options, formatters: { blockquote } });
parentPort.on('message', ({ html, maxLength }) => {
  let text;
  try {
    text = convert(html).trim().slice(0, maxLength);
  } catch {
    parentPort.postMessage({ text: null });
    return;
  }
  parentPort.postMessage({ text });
});
parentPort.postMessage({ ready: true });
`;

interface Job {
  html: string;
  maxLength: number;
  timeoutMs: number;
  resolve: (text: string | null) => void;
}

/** Where html-to-text lies, for the worker's `require`; null when it cannot be found (a
 *  bundle that inlined it): every mail then gets the strip. */
function libraryPath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('html-to-text');
  } catch {
    return null;
  }
}

let library: string | null | undefined;
let worker: Worker | undefined;
/** Set when a worker failed before it was ready: no other is started in this process. */
let unavailable = false;
const queue: Job[] = [];
let current: { job: Job; worker: Worker; timer: NodeJS.Timeout } | undefined;
let idle: NodeJS.Timeout | undefined;

function startWorker(): Worker | undefined {
  library ??= libraryPath();
  if (unavailable || library === null) return undefined;
  let w: Worker;
  try {
    w = new Worker(SOURCE, {
      eval: true,
      workerData: { library, options: OPTIONS, maxQuoteDepth: MAX_QUOTE_DEPTH },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
  } catch {
    unavailable = true;
    return undefined;
  }
  let ready = false;
  w.on('message', (m: { ready?: boolean; text?: string | null }) => {
    if (m.ready) ready = true;
    else settle(w, typeof m.text === 'string' ? m.text : null);
  });
  // An error before `ready` is a worker that cannot load html-to-text: not retried per mail.
  w.on('error', () => {
    if (!ready) unavailable = true;
    drop(w);
  });
  w.on('exit', () => drop(w));
  // A worker never keeps the host's process alive; a job waits on its own (ref'd) timer.
  w.unref();
  return w;
}

/** A worker that ended (error, out of heap, timeout): its job gets no text. */
function drop(w: Worker) {
  if (worker === w) worker = undefined;
  settle(w, null);
}

function settle(w: Worker, text: string | null) {
  if (current?.worker !== w) return;
  clearTimeout(current.timer);
  const { job } = current;
  current = undefined;
  job.resolve(text);
  next();
}

function next() {
  if (current) return;
  const job = queue.shift();
  if (!job) {
    clearTimeout(idle);
    idle = setTimeout(() => {
      const w = worker;
      worker = undefined;
      void w?.terminate();
    }, IDLE_MS).unref();
    return;
  }
  clearTimeout(idle);
  worker ??= startWorker();
  const w = worker;
  if (!w) {
    job.resolve(null);
    next();
    return;
  }
  const timer = setTimeout(() => {
    // Over its budget: the worker is ended mid-conversion (the only way to stop it), and the
    // next job starts another.
    worker = undefined;
    void w.terminate();
    settle(w, null);
  }, job.timeoutMs);
  current = { job, worker: w, timer };
  w.postMessage({ html: job.html, maxLength: job.maxLength });
}

/** html-to-text's rendering of `html`, on a worker thread so the event loop that answers HTTP
 *  stays free, at most `maxLength` characters; null when it fails, outlives `timeoutMs` (the
 *  worker is then ended) or no worker can run. One conversion at a time, in arrival order. */
export function convertOffThread(
  html: string,
  opts: { maxLength: number; timeoutMs: number },
): Promise<string | null> {
  return new Promise((resolve) => {
    queue.push({ html, ...opts, resolve });
    next();
  });
}
