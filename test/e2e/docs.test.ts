// The README and docs/ run: every shell block in a shell against a real server, every program with
// node, every fragment type-checked against the SDK's types, every JSON and YAML block parsed, every
// relative link followed. A block that cannot run says why (```sh skip="…"), and the test checks that
// it does. The conventions are in docs/development.md ("The docs are tested").
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { docFiles, readDoc, type DocBlock } from '#test-helpers/doc-blocks.js';
import { onTestDatabase, root, startServerProcess, type ServerProcess } from '#test-helpers/server-process.js';

// LOYALTY_DOCS=docs/cli.md (comma-separated) runs only those pages' blocks, while editing them.
const only = process.env.LOYALTY_DOCS?.split(',').filter(Boolean);
const files = docFiles(root);
const docs = new Map(files.map((file) => [file, readDoc(root, file)]));
const DOC_URL = /http:\/\/(?:127\.0\.0\.1|localhost):3000/g;
const LANGS = new Set(['sh', 'js', 'ts', 'json', 'jsonc', 'yaml', 'text']);
const artifacts = path.join(root, 'test-artifacts/docs');

let db: TestDatabase;
let server: ServerProcess;
let scratch: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // The server as `npm start` runs it: the default (demo) fixtures, sandbox and insecure webhooks on.
  const env = onTestDatabase(db.url);
  delete (env as Record<string, string | undefined>).LOYALTY_FIXTURES;
  server = await startServerProcess({ ...env, LOYALTY_SANDBOX: '1', LOYALTY_WEBHOOK_ALLOW_INSECURE: '1' });
  scratch = await mkdtemp(path.join(tmpdir(), 'loyalty-docs-'));
  await mkdir(artifacts, { recursive: true });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const where = (block: DocBlock): string => `${block.file}:${block.line}`;

/** The line (from 1) where a shell block's last command starts: not a comment, not a continuation. */
function lastCommandLine(code: string): number {
  const lines = code.split('\n');
  let last = 0;
  lines.forEach((line, i) => {
    const continued = i > 0 && /\\\s*$/.test(lines[i - 1]!);
    if (line.trim() && !line.trim().startsWith('#') && !continued) last = i + 1;
  });
  return last;
}
const withServer = (code: string): string => code.replace(DOC_URL, server.url);

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * A page's shell session: a working directory holding a copy of fixtures/ (imports write rejects
 * files next to their input) and links to the rest of the checkout, a HOME of its own (the CLI's
 * login), `loyalty` on the PATH, and the server's address where the docs say 127.0.0.1:3000.
 */
async function session(file: string): Promise<{ cwd: string; env: NodeJS.ProcessEnv; state: string }> {
  const dir = path.join(scratch, file.replace(/\W/g, '_'));
  const cwd = path.join(dir, 'work');
  const bin = path.join(dir, 'bin');
  await mkdir(cwd, { recursive: true });
  await mkdir(bin, { recursive: true });
  await cp(path.join(root, 'fixtures'), path.join(cwd, 'fixtures'), { recursive: true });
  for (const entry of readdirSync(root)) {
    if (['fixtures', '.git', '.loyalty', 'test-artifacts'].includes(entry)) continue;
    await symlink(path.join(root, entry), path.join(cwd, entry));
  }
  await writeFile(
    path.join(bin, 'loyalty'),
    `#!/bin/sh\nexec "${process.execPath}" "${path.join(root, 'cli/bin/loyalty.js')}" "$@"\n`,
  );
  await chmod(path.join(bin, 'loyalty'), 0o755);
  const env: NodeJS.ProcessEnv = {
    PATH: [bin, path.dirname(process.execPath), path.join(root, 'node_modules/.bin'), process.env.PATH].join(':'),
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, '.config'),
    XDG_DATA_HOME: path.join(dir, '.local/share'),
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    LOYALTY_API_URL: server.url,
    NO_COLOR: '1',
  };
  return { cwd, env, state: path.join(dir, 'shell-state.sh') };
}

describe('links', () => {
  for (const [file, doc] of docs) {
    const relative = doc.links.filter((l) => !/^[a-z]+:/i.test(l.href));
    if (relative.length === 0) continue;
    it(`${file}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const link of relative) {
        const [target = '', anchor] = link.href.split('#');
        const resolved = target ? path.normalize(path.join(path.dirname(file), target)) : file;
        if (!existsSync(path.join(root, resolved))) broken.push(`${file}:${link.line} ${link.href}: no such file`);
        else if (anchor && resolved.endsWith('.md') && !docs.get(resolved)?.headings.includes(anchor))
          broken.push(`${file}:${link.line} ${link.href}: no heading #${anchor} in ${resolved}`);
      }
      expect(broken).toEqual([]);
    });
  }
});

it('every block names its language, and every block that does not run says why', () => {
  const wrong: string[] = [];
  for (const doc of docs.values()) {
    for (const block of doc.blocks) {
      if (!LANGS.has(block.lang)) wrong.push(`${where(block)}: language "${block.lang}" (one of ${[...LANGS]})`);
      if (block.attrs.skip === true || block.attrs.skip === '') wrong.push(`${where(block)}: skip without a reason`);
    }
  }
  expect(wrong).toEqual([]);
});

for (const file of files.filter((f) => !only || only.includes(f))) {
  const blocks = docs.get(file)!.blocks;
  const shell = blocks.filter((b) => b.lang === 'sh' && !b.attrs.skip);
  const programs = blocks.filter((b) => b.lang === 'js' && !b.attrs.fragment && !b.attrs.skip);
  if (shell.length + programs.length === 0) continue;
  describe.sequential(file, () => {
    let sh: { cwd: string; env: NodeJS.ProcessEnv; state: string };
    beforeAll(async () => {
      sh = await session(file);
    });
    for (const block of blocks) {
      if (block.attrs.skip || block.attrs.fragment) continue;
      if (block.lang === 'sh') {
        it(`${where(block)} runs (exit ${block.attrs.exit ?? 0})`, async () => {
          // The page is one terminal session: the variables a block sets (TOKEN=…) are there in the
          // next. The ERR trap names the failing line: a block that is to exit N must fail in its last command.
          const prologue = [
            `[ -f "${sh.state}" ] && source "${sh.state}" 2>/dev/null || true`,
            `trap 'declare -p | grep -Ev "^declare -[A-Za-z-]*r|^declare -[A-Za-z-]* (BASH|PIPESTATUS|FUNCNAME|GROUPS|DIRSTACK|SHELLOPTS|PPID|UID|EUID|HOSTNAME|RANDOM|LINENO|SECONDS|OLDPWD|PWD|_)=" > "${sh.state}"' EXIT`,
            'set -eo pipefail',
            `trap 'echo "__failed_at__ $LINENO" >&2' ERR`,
          ];
          const script = `${prologue.join('\n')}\n${withServer(block.code)}\n`;
          const result = await run('bash', ['-c', script], sh);
          const detail = `${where(block)}\n${block.code}\n---\n${result.out}`;
          expect(result.code, detail).toBe(Number(block.attrs.exit ?? 0));
          if (typeof block.attrs.expect === 'string') expect(result.out, detail).toContain(block.attrs.expect);
          if (block.attrs.exit) {
            const failedAt = Number(/__failed_at__ (\d+)/.exec(result.out)?.[1]) - prologue.length;
            expect(failedAt, `${detail}\nonly the last command may fail`).toBeGreaterThanOrEqual(
              lastCommandLine(block.code),
            );
          }
        });
      } else if (block.lang === 'js') {
        it(`${where(block)} runs with node`, async () => {
          const program = path.join(artifacts, `${file.replace(/\W/g, '_')}-${block.line}.mjs`);
          await writeFile(program, withServer(block.code));
          const result = await run(process.execPath, [program], sh);
          expect(result.code, `${where(block)}\n---\n${result.out}`).toBe(0);
        });
      }
    }
  });
}

it('every JSON and YAML block parses', () => {
  for (const doc of docs.values()) {
    for (const block of doc.blocks) {
      if (block.attrs.skip) continue;
      if (block.lang === 'json') expect(() => JSON.parse(block.code), where(block)).not.toThrow();
      if (block.lang === 'jsonc')
        expect(() => JSON.parse(block.code.replace(/^\s*\/\/.*$/gm, '')), where(block)).not.toThrow();
      if (block.lang === 'yaml') expect(() => parseYaml(block.code), where(block)).not.toThrow();
    }
  }
});

/** What a fragment may use without defining it: declared for the type check when it does not define it. */
const FRAGMENT_CONTEXT: Record<string, string> = {
  client: "declare const client: import('@loyalty/sdk').LoyaltyClient;",
  body: 'declare const body: any;',
  brandId: 'declare const brandId: string;',
  streamMembers: "declare const streamMembers: typeof import('@loyalty/sdk').streamMembers;",
  uuid: 'declare const uuid: string;',
  passCode: 'declare const passCode: string;',
  rawBody: 'declare const rawBody: string;',
  request: 'declare const request: Request;',
  secret: 'declare const secret: string;',
  handle: 'declare function handle(event: unknown): void;',
  server: "declare const server: import('@hapi/hapi').Server;",
  app: "declare const app: import('express').Express;",
  express: "declare const express: typeof import('express');",
  createServer: "declare const createServer: typeof import('node:http').createServer;",
  constructEvent: "declare const constructEvent: typeof import('@loyalty/sdk/webhooks').constructEvent;",
  constructEventAsync: "declare const constructEventAsync: typeof import('@loyalty/sdk/webhooks').constructEventAsync;",
  WebhookVerificationError:
    "declare const WebhookVerificationError: typeof import('@loyalty/sdk/webhooks').WebhookVerificationError;",
  wasReplayed: "declare const wasReplayed: typeof import('@loyalty/sdk').wasReplayed;",
};

const defines = (code: string, name: string): boolean =>
  new RegExp(`(?:const|let|var|function|class)\\s+${name}\\b|import[^;]*\\b${name}\\b[^;]*from`).test(code);

it('every fragment compiles: TypeScript type-checked against the SDK, JavaScript parsed', async () => {
  const dir = path.join(artifacts, 'fragments');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const names: string[] = [];
  for (const doc of docs.values()) {
    for (const block of doc.blocks.filter((b) => (b.lang === 'ts' || b.lang === 'js') && b.attrs.fragment)) {
      const context = Object.entries(block.lang === 'ts' ? FRAGMENT_CONTEXT : {})
        .filter(([name]) => new RegExp(`\\b${name}\\b`).test(block.code) && !defines(block.code, name))
        .map(([, declaration]) => declaration);
      // TypeScript is type-checked; JavaScript (receivers for frameworks this repository does not type) is parsed.
      const name = `${block.file.replace(/\W/g, '_')}-${block.line}.${block.lang}`;
      names.push(name);
      await writeFile(path.join(dir, name), `// ${where(block)}\n${context.join('\n')}\n${block.code}\nexport {};\n`);
    }
  }
  expect(names.length).toBeGreaterThan(0);
  await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2023',
        lib: ['es2023', 'dom'],
        types: ['node'],
        skipLibCheck: true,
        allowJs: true,
        checkJs: false,
        noUnusedLocals: false,
      },
      files: names,
    }),
  );
  const result = await run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    cwd: dir,
    env: process.env,
  });
  expect(result.out).toBe('');
  expect(result.code).toBe(0);
}, 120_000);
