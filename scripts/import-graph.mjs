#!/usr/bin/env node
// Import-graph check for packages/*/src: fails on any import circle (type-only
// imports count, since a type circle still couples the modules) and on any
// import from a lower layer to a higher one. The layers are described in
// docs/decisions/0008-module-layers.md.
//
// Usage: node scripts/import-graph.mjs [--graph]   (--graph prints every edge)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');

/** Source files of every package, as paths relative to the repository root. */
function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mts|tsx)$/.test(name)) files.push(relative(root, path));
    }
  };
  for (const pkg of readdirSync(packagesDir)) {
    const src = join(packagesDir, pkg, 'src');
    if (existsSync(src)) walk(src);
  }
  return files.sort();
}

/** `@postern/<pkg>[/<subpath>]` to a source file, through the same paths the type-checker uses. */
function packageAliases() {
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile).config;
  const aliases = new Map();
  for (const [name, [target]] of Object.entries(base.compilerOptions.paths ?? {})) {
    aliases.set(name, relative(root, resolve(root, target)));
  }
  return aliases;
}

/** Every module specifier a file names: imports, re-exports, `import()` and `import('x').T`. */
function specifiers(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found = [];
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) found.push(arg.literal.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      // `declare module 'x'` names an ambient module; it imports nothing.
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveSpecifier(from, spec, known, aliases) {
  if (aliases.has(spec)) return aliases.get(spec);
  if (!spec.startsWith('.')) return undefined;
  // JSON and other non-source files (package.json for the version) are leaves outside the graph.
  if (/\.(json|md|sql)$/.test(spec)) return undefined;
  const bare = join(dirname(from), spec).replace(/\.(m?js|ts)$/, '');
  for (const candidate of [`${bare}.ts`, `${bare}.mts`, `${bare}.tsx`, join(bare, 'index.ts')]) {
    if (known.has(candidate)) return candidate;
  }
  throw new Error(`${from}: cannot resolve '${spec}'`);
}

export function buildGraph() {
  const files = sourceFiles();
  const known = new Set(files);
  const aliases = packageAliases();
  const graph = new Map();
  for (const file of files) {
    const targets = new Set();
    for (const spec of specifiers(file)) {
      const target = resolveSpecifier(file, spec, known, aliases);
      if (target && target !== file) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Strongly connected components with more than one file (Tarjan), each a circle or a knot of them. */
export function circles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const indices = new Map();
  const low = new Map();
  const components = [];
  const strongConnect = (v) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), indices.get(w)));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) strongConnect(v);
  return components;
}

/** One shortest circle through `start` inside its component, for a readable report. */
function shortestCircle(graph, component, start) {
  const inside = new Set(component);
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = previous.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

// Layers of @postern/core, lowest first. A file may import its own layer or lower ones, never a
// higher one. The first layer with a pattern that matches a file decides its layer: a pattern
// ending in `/` matches a folder, any other names one file.
export const CORE_LAYERS = [
  { name: 'base', patterns: ['errors.ts', 'types/'] },
  { name: 'ports', patterns: ['ports/'] },
  { name: 'util', patterns: ['util/'] },
  { name: 'tokens', patterns: ['tokens/'] },
  { name: 'http', patterns: ['http/'] },
  {
    name: 'shared types',
    patterns: [
      'options.ts',
      'context.ts',
      'auth/option-types.ts',
      'mfa/option-types.ts',
      'inbox/option-types.ts',
      'webhook/types.ts',
      'outbox/types.ts',
    ],
  },
  { name: 'services', patterns: ['outbox/', 'webhook/', 'mailers/', 'memory/'] },
  { name: 'areas', patterns: ['auth/', 'mfa/', 'inbox/'] },
  { name: 'root', patterns: ['postern.ts', 'index.ts', 'internal.ts'] },
];

// Which other areas each area may import: MFA completes the auth area's logins; the inbox
// stands alone (it reaches sessions and users through the shared context only).
export const AREA_IMPORTS = { auth: [], mfa: ['auth'], inbox: [] };

const CORE = 'packages/core/src/';

function coreLayer(file) {
  if (!file.startsWith(CORE)) return undefined;
  const inside = file.slice(CORE.length);
  for (const [rank, layer] of CORE_LAYERS.entries()) {
    if (layer.patterns.some((p) => (p.endsWith('/') ? inside.startsWith(p) : inside === p))) {
      return { rank, name: layer.name, area: inside.split('/')[0] };
    }
  }
  throw new Error(`${file}: no layer declared for it in scripts/import-graph.mjs`);
}

// Between packages: the mail reader (inbox) is the bottom, a leaf that imports no other package
// (core loads it on first use); core builds on it; the adapters and postgres on core; testkit on
// all. The browser client stands alone (a page's bundle must not pull in the server code). A
// package may import only packages of a lower rank.
const PACKAGE_RANK = { inbox: 0, client: 0, core: 1, express: 2, fastify: 2, postgres: 2, testkit: 3 };
const packageOf = (file) => file.split('/')[1];
const packageRank = (name) => {
  if (!(name in PACKAGE_RANK))
    throw new Error(`package ${name}: no rank declared in scripts/import-graph.mjs`);
  return PACKAGE_RANK[name];
};

export function upwardImports(graph) {
  const problems = [];
  for (const [from, targets] of graph) {
    packageRank(packageOf(from));
    for (const to of targets) {
      const a = packageOf(from);
      const b = packageOf(to);
      if (a !== b) {
        if (packageRank(a) <= packageRank(b)) {
          problems.push(`${from} -> ${to}: package ${a} may not import package ${b}`);
        }
        continue;
      }
      const la = coreLayer(from);
      const lb = coreLayer(to);
      if (!la || !lb) continue;
      if (lb.rank > la.rank) {
        problems.push(`${from} (${la.name}) -> ${to} (${lb.name}): imports a higher layer`);
      } else if (la.name === 'areas' && lb.name === 'areas' && la.area !== lb.area) {
        if (!AREA_IMPORTS[la.area]?.includes(lb.area)) {
          problems.push(`${from} -> ${to}: area ${la.area} may not import area ${lb.area}`);
        }
      }
    }
  }
  return problems;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const graph = buildGraph();
  if (process.argv.includes('--graph')) {
    for (const [from, targets] of graph) for (const to of targets) console.log(`${from} -> ${to}`);
  }
  const found = circles(graph);
  for (const component of found) {
    console.error(`circle among ${component.length} files:`);
    console.error(`  ${shortestCircle(graph, component, component[0]).join('\n    -> ')}`);
  }
  const upward = upwardImports(graph);
  for (const problem of upward) console.error(`upward import: ${problem}`);
  const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
  if (found.length > 0 || upward.length > 0) {
    console.error(
      `import-graph: ${found.length} circle(s), ${upward.length} upward import(s) in ${graph.size} files`,
    );
    process.exit(1);
  }
  console.log(`import-graph: ${graph.size} files, ${edges} imports, no circles, no upward imports`);
}
