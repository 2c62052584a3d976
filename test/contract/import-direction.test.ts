import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Layers point one way (CONTRIBUTING.md, "The architecture map"). Every source file of a package
 * belongs to the layer of its first folder under `src/` (`server/src/services/members/list.ts` is
 * in `services`, however deep the domain folders go); a file directly in `src/` to the layer its
 * name gives in `ROOT_FILES`, else to the package's root layer. A layer may import its own
 * files and those of the layers it lists; `ANY` marks the layers that compose the others. Test
 * files and test support are not read; type-only imports count like any other. No file may
 * import itself back through others (an import cycle), in any layer.
 */
const ANY = '*';
type Layers = Record<string, readonly string[] | typeof ANY>;
type Package = { src: string; rootLayer: string; rootFiles?: Record<string, string>; layers: Layers };

const PACKAGES: Package[] = [
  {
    src: 'server/src',
    rootLayer: 'app', // server.ts, start.ts, worker.ts, ...: compose and start the layers
    rootFiles: {
      'config.ts': 'config',
      'config-wallet.ts': 'config',
      'config-cors.ts': 'config',
      'context.ts': 'context',
    },
    layers: {
      config: [], // every setting, checked once: read by every layer
      lib: ['config'],
      db: ['lib', 'config'],
      services: ['db', 'lib', 'config'],
      tasks: ['services', 'db', 'lib', 'config'],
      plugins: ['services', 'db', 'lib', 'config'],
      pages: ['services', 'db', 'lib', 'config'],
      context: ['services', 'db', 'lib', 'config'], // what routes read through request.server.app
      routes: ['context', 'plugins', 'pages', 'services', 'db', 'lib', 'config'],
      app: ANY,
    },
  },
  {
    src: 'sdk/src',
    rootLayer: 'public', // the modules the package exports
    layers: { internal: ['generated'], generated: ANY, 'mock-api': ANY, wallet: ['public'], public: ANY },
  },
  {
    src: 'cli/src',
    rootLayer: 'shared', // main.ts, context.ts, errors.ts, output.ts, ...
    layers: {
      services: ['shared', 'ui', 'import', 'generated'], // never commands
      commands: ANY,
      import: ANY,
      ui: ANY,
      generated: ANY,
      testing: ANY,
      shared: ANY,
    },
  },
];

/**
 * Known imports against the layers and import cycles, each with its reason; the test fails once
 * one is gone, so the list only shrinks. sdk/src/internal/transport.ts sends every call with the
 * public auth, rate-limit and retry modules: it moves with the rewrite of the SDK's request path
 * (issue 26, "The SDK on openapi-fetch's public surface"), not here.
 */
const KNOWN: Record<string, string> = {
  'sdk/src/internal/transport.ts -> sdk/src/auth.ts': 'SDK request path rewrite (issue 26)',
  'sdk/src/internal/transport.ts -> sdk/src/rate-limit.ts': 'SDK request path rewrite (issue 26)',
  'sdk/src/internal/transport.ts -> sdk/src/retry.ts': 'SDK request path rewrite (issue 26)',
};

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TEST_FILE = /\.test(-d)?\.tsx?$|(^|\/)test-support(\.ts|\/)/;

/** The layer of a file given by its path under `src/` ('/'-separated). */
function layerOf(pkg: Package, path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? (pkg.rootFiles?.[path] ?? pkg.rootLayer) : path.slice(0, slash);
}

/** The relative specifiers a source imports or re-exports, type-only and dynamic ones included. */
function importsOf(text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((name) => name.startsWith('.'));
}

/** `from -> to` for each import of `files` (path under src → text) that its layer may not make. */
function violations(pkg: Package, files: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [path, text] of Object.entries(files)) {
    const from = layerOf(pkg, path);
    const allowed = pkg.layers[from];
    if (allowed === undefined) {
      found.push(`${pkg.src}/${path}: layer "${from}" is not in the table of ${pkg.src}`);
      continue;
    }
    for (const specifier of importsOf(text)) {
      const target = join(dirname(path), specifier).split(sep).join('/').replace(/\.js$/, '.ts');
      if (target.startsWith('..')) continue; // outside src: another package's concern
      const to = layerOf(pkg, target);
      if (to === from || allowed === ANY || allowed.includes(to)) continue;
      found.push(`${pkg.src}/${path} -> ${pkg.src}/${target}`);
    }
  }
  return found;
}

/**
 * The import cycles among `files` (path under src → text): each set of files that reach one
 * another through their imports (Tarjan's strongly connected components), sorted.
 */
function cyclesOf(pkg: Package, files: Record<string, string>): string[] {
  const edges = new Map<string, string[]>();
  for (const [path, text] of Object.entries(files)) {
    const targets = importsOf(text).map((specifier) => join(dirname(path), specifier).split(sep).join('/'));
    edges.set(
      path,
      targets.flatMap((t) => [t.replace(/\.js$/, '.ts'), t.replace(/\.js$/, '.tsx')]).filter((t) => t in files),
    );
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) visit(w);
      if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, low.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = stack.splice(stack.indexOf(v));
    if (component.length > 1)
      cycles.push(
        `cycle: ${component
          .sort()
          .map((f) => `${pkg.src}/${f}`)
          .join(' <-> ')}`,
      );
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

function sourcesOf(pkg: Package): Record<string, string> {
  const dir = join(repo, pkg.src);
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = entry.split(sep).join('/');
    if (!/\.tsx?$/.test(path) || path.endsWith('.d.ts') || TEST_FILE.test(path)) continue;
    files[path] = readFileSync(join(dir, path), 'utf8');
  }
  return files;
}

describe('the checker', () => {
  const pkg = PACKAGES[0]!;
  it('finds an import of a higher layer, whatever its form, and lets the lower ones through', () => {
    const found = violations(pkg, {
      'plugins/a.ts': "import { x } from '../routes/route-options.js';\nimport { y } from '../services/y.js';",
      'lib/b.ts': "export type { Z } from '../db/pool.js';\nimport('../context.js');",
      'services/members/list.ts': "import type { T } from '../../lib/t.js';\nimport { u } from '../tags.js';",
      'tasks/c.ts': "import { s } from '../services/webhooks/deliveries.js';\nimport { w } from '../worker.js';",
    });
    expect(found).toEqual([
      'server/src/plugins/a.ts -> server/src/routes/route-options.ts',
      'server/src/lib/b.ts -> server/src/db/pool.ts',
      'server/src/lib/b.ts -> server/src/context.ts',
      'server/src/tasks/c.ts -> server/src/worker.ts',
    ]);
  });

  it('finds an import cycle, also through a file between', () => {
    const files = {
      'tasks/index.ts': "import { a } from './a.js';",
      'tasks/a.ts': "import type { C } from './index.js';\nimport { b } from './b.js';",
      'tasks/b.ts': "import type { C } from './context.js';",
      'tasks/context.ts': '',
      'lib/x.ts': "import { y } from './y.js';",
      'lib/y.ts': "import { x } from './x.js';",
    };
    expect(cyclesOf(pkg, files)).toEqual([
      'cycle: server/src/tasks/a.ts <-> server/src/tasks/index.ts',
      'cycle: server/src/lib/x.ts <-> server/src/lib/y.ts',
    ]);
  });

  it('refuses a folder that the table does not place', () => {
    expect(violations(pkg, { 'jobs/a.ts': '' })).toEqual([
      'server/src/jobs/a.ts: layer "jobs" is not in the table of server/src',
    ]);
  });
});

describe('the tree', () => {
  const found = PACKAGES.flatMap((pkg) => {
    const files = sourcesOf(pkg);
    return [...violations(pkg, files), ...cyclesOf(pkg, files)];
  });

  it('imports along the layers only, and in no cycle', () => {
    expect(found.filter((v) => !(v in KNOWN))).toEqual([]);
  });

  it('still makes every known exception (remove the ones that are gone)', () => {
    expect(Object.keys(KNOWN).filter((v) => !found.includes(v))).toEqual([]);
  });
});
