// Odd arguments, odd files and odd stdin for every command: whatever a user types or pipes in,
// the answer is an expected error (a line and an exit code), never "This is a bug". A hand
// table plus a seeded generator instead of a property-testing library: the cases are few
// and each failure names its exact command line.
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { buildProgram } from './main.js';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome, type CliRun } from '#test-helpers/cli-unit/run-cli.js';

// Whatever the fake API does not implement answers like the API does for an unknown id.
const notFound = http.all(`${API}/*`, () =>
  HttpResponse.json({ message: 'Not found.', error: 'not_found' }, { status: 404 }),
);
fakeApiServer({ fallback: [notFound] });

const EXIT_CODES = [0, 1, 2, 3, 4, 130];

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const randomBytes = (next: () => number, length: number): Buffer =>
  Buffer.from(Array.from({ length }, () => Math.floor(next() * 256)));

interface Workspace {
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Paths (relative to dir) of odd inputs. */
  files: Record<string, string>;
}

async function workspace(): Promise<Workspace> {
  const dir = await tempConfigHome();
  await mkdir(join(dir, 'a-directory.csv'));
  const files: Record<string, string> = {};
  const put = async (name: string, content: string | Buffer): Promise<void> => {
    await writeFile(join(dir, name), content);
    files[name] = name;
  };
  await put('binary.csv', randomBytes(random(1), 4096));
  await put('empty.csv', '');
  await put(
    'latin1.csv',
    Buffer.concat([Buffer.from('email\nj'), Buffer.from([0xf6]), Buffer.from('rg@example.com\n')]),
  );
  return { dir, env: { ...loggedInEnv(dir), CI: '1' }, files };
}

/** Every command line must end in an expected way. */
function expectHandled(result: CliRun, args: readonly string[]): void {
  const shown = JSON.stringify(args).slice(0, 300);
  expect(EXIT_CODES, `${shown}: exit ${result.code}\n${result.stderr}`).toContain(result.code);
  expect(result.stderr, shown).not.toMatch(/This is a bug|Unexpected error/);
  expect(result.stderr, shown).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
}

/** Runs with a deadline: a command that waits (listen, --wait) is interrupted like Ctrl-C. */
async function runBounded(
  args: string[],
  ws: Workspace,
  stdin: string | Buffer = randomBytes(random(2), 512),
): Promise<CliRun> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 1500);
  try {
    return await runCli(args, { env: ws.env, cwd: ws.dir, stdin, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

const ODD_VALUES = (ws: Workspace): string[] => [
  '',
  ' ',
  '\u0000',
  '-',
  '--',
  '-1',
  '0',
  '1e309',
  'NaN',
  '😀\u202e\ud800',
  'x'.repeat(5000),
  'a-directory.csv',
  'missing/nowhere.csv',
  ws.files['binary.csv']!,
  ws.files['latin1.csv']!,
  'http://[::1',
  // A path that climbs and comes back: never a path outside the workspace (tests run as root, and
  // a command that writes its output there would overwrite it: /etc/passwd was, once).
  `nested/../../${basename(ws.dir)}/climbed.csv`,
];

interface Leaf {
  path: string[];
  command: Command;
}

function leaves(): Leaf[] {
  const found: Leaf[] = [];
  const walk = (command: Command, path: string[]): void => {
    if (command.commands.length === 0) found.push({ path, command });
    for (const child of command.commands) walk(child, [...path, child.name()]);
  };
  walk(buildProgram(), []);
  // `loyalty server` starts an embedded PostgreSQL: its start-up errors are tested in server/.
  return found.filter((leaf) => leaf.path[0] !== 'server');
}

describe('every command under odd arguments', { timeout: 600_000 }, () => {
  const all = leaves();

  it('covers the command tree', () => {
    expect(all.length).toBeGreaterThan(25);
  });

  for (const leaf of all) {
    it(`loyalty ${leaf.path.join(' ')}`, async () => {
      const ws = await workspace();
      const positionals = leaf.command.registeredArguments.filter((a) => a.required);
      const valued = leaf.command.options.filter((o) => (o.required || o.optional) && o.long);
      const flags = leaf.command.options.filter((o) => !o.required && !o.optional && o.long && o.long !== '--help');
      const runs: string[][] = [[...leaf.path], [...leaf.path, ...flags.map((o) => o.long!)]];
      for (const value of ODD_VALUES(ws)) {
        // Every positional argument odd, alone and with --json.
        runs.push(
          [...leaf.path, ...positionals.map(() => value)],
          [...leaf.path, ...positionals.map(() => value), '--json'],
        );
        // One odd option value at a time, with plain positionals.
        for (const option of valued) runs.push([...leaf.path, ...positionals.map(() => 'x'), option.long!, value]);
      }
      await eachBounded(runs);
    });
  }
});

/**
 * Runs every command line, eight at a time, each lane in a workspace of its own (like eight users
 * side by side): a command that waits (listen, --wait) spends its 1.5 s deadline beside the others
 * rather than before them, and no run sees what a run of another lane left in its config.
 */
async function eachBounded(
  runs: string[][],
  prepare: (ws: Workspace) => Promise<void> = async () => {},
): Promise<void> {
  const queue = [...runs];
  const lane = async () => {
    const ws = await workspace();
    await prepare(ws);
    for (let args = queue.shift(); args; args = queue.shift()) expectHandled(await runBounded(args, ws), args);
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}

describe('global options under odd values', { timeout: 600_000 }, () => {
  const globals = buildProgram().options.filter((o) => (o.required || o.optional) && o.long);

  it('covers --api-url, --profile, --brand and --token-file', () => {
    expect(globals.map((o) => o.long)).toEqual(
      expect.arrayContaining(['--api-url', '--profile', '--brand', '--token-file']),
    );
  });

  for (const command of [
    ['tags', 'list'],
    ['members', 'import', 'members.csv'],
    ['config', 'list'],
  ]) {
    it(`loyalty ${command.join(' ')}`, async () => {
      const ws = await workspace();
      await writeFile(join(ws.dir, 'members.csv'), 'email\na@example.com\n');
      for (const option of globals) {
        await eachBounded(
          ODD_VALUES(ws).map((value) => [option.long!, value, ...command]),
          (lane) => writeFile(join(lane.dir, 'members.csv'), 'email\na@example.com\n'),
        );
      }
    });
  }
});

describe('loyalty members import under odd files', { timeout: 600_000 }, () => {
  const next = random(12);
  const header = 'email,first_name\n';
  const contents: Array<[string, string | Buffer]> = [
    ['empty', ''],
    ['only a BOM', '\uFEFF'],
    ['only a header', 'email\n'],
    ['blank lines', '\n\n\r\n'],
    ['a lone quote', '"'],
    ['quote at the end of the header', 'email,"\n'],
    ['a quote inside a header name', 'em"ail\na@example.com\n'],
    ['CR-only line ends (classic Mac)', 'email\ra@example.com\rb@example.com\r'],
    ['a NUL in the middle', `${header}a@example.com,A\u0000n\n`],
    ['UTF-16 LE', Buffer.from('\uFEFFemail\na@example.com\n', 'utf16le')],
    ['UTF-16 without BOM', Buffer.from('email\na@example.com\n', 'utf16le')],
    ['a cut-off character at the end', Buffer.concat([Buffer.from(`${header}a@example.com,J`), Buffer.from([0xc3])])],
    ['overlong UTF-8', Buffer.concat([Buffer.from(header), Buffer.from([0xc0, 0xaf, 0x0a])])],
    ['a lone surrogate in UTF-8 (CESU)', Buffer.concat([Buffer.from(header), Buffer.from([0xed, 0xa0, 0x80, 0x0a])])],
    ['10,000 columns', `${Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(',')},email\n`],
    ['one 2 MB line', `${header}${'x'.repeat(2 * 1024 * 1024)}\n`],
    ['an unterminated quote after a long file', `${header}${'a@example.com,A\n'.repeat(5000)}b@example.com,"B\n`],
    ['duplicate and empty header names', 'email,email,,\na@example.com,b@example.com,x,y\n'],
    ['JSON Lines with junk', '{"email":"a@example.com"}\n{"email":\n\u001b[31m\n[]\nnull\n"x"\n'],
    [
      'JSON with a huge number and deep nesting',
      `{"email":"a@example.com","n":1e999,"d":${'['.repeat(5000)}${']'.repeat(5000)}}\n`,
    ],
    ...Array.from({ length: 12 }, (_, i): [string, Buffer] => [
      `random bytes #${i}`,
      randomBytes(next, 1 + Math.floor(next() * 3000)),
    ]),
    ...Array.from({ length: 8 }, (_, i): [string, Buffer] => [
      `a CSV with random bytes spliced in #${i}`,
      Buffer.concat([
        Buffer.from(`${header}a@example.com,Ann\n`),
        randomBytes(next, 1 + Math.floor(next() * 20)),
        Buffer.from('\nb@example.com,Bo\n'),
      ]),
    ]),
  ];

  for (const [label, content] of contents) {
    it(label, async () => {
      const ws = await workspace();
      for (const name of ['input.csv', 'input.jsonl', 'input']) await writeFile(join(ws.dir, name), content);
      const runs: Array<{ args: string[]; stdin?: string | Buffer }> = [
        { args: ['members', 'import', 'input.csv', '--dry-run'] },
        { args: ['members', 'import', 'input.csv'] },
        { args: ['members', 'import', 'input.jsonl', '--dry-run', '--json'] },
        { args: ['members', 'import', 'input', '--dry-run', '--delimiter', ';'] },
        { args: ['members', 'import', 'input.csv', '--dry-run', '--format', 'jsonl'] },
        { args: ['members', 'import', '-', '--dry-run'], stdin: content },
        {
          args: ['members', 'import', '-', '--dry-run', '--format', 'csv', '--delimiter', 'tab', '--map', 'email=c1'],
          stdin: content,
        },
      ];
      for (const { args, stdin } of runs) expectHandled(await runBounded(args, ws, stdin), args);
    });
  }
});
