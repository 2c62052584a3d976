import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import type { InputFormat } from './parse.js';
import { defaultRejectsPath, OrderedRejects, RejectsWriter } from './rejects.js';
import type { RejectedRow } from './validate.js';

/** Writes the rows, in line order, through a RejectsWriter. */
async function writeRejects(path: string, format: InputFormat, columns: string[], rows: RejectedRow[]): Promise<void> {
  const writer = new RejectsWriter(path, format, columns);
  for (const row of [...rows].sort((a, b) => a.line - b.line)) await writer.add(row);
  await writer.close();
}

async function renderRejects(format: InputFormat, columns: string[], rows: RejectedRow[]): Promise<string> {
  const path = join(await tempConfigHome(), `rejects.${format}`);
  await writeRejects(path, format, columns, rows);
  return readFile(path, 'utf8');
}

describe('RejectsWriter', () => {
  const rows = [
    {
      line: 7,
      fields: { email: 'x@y', first_name: 'Ann, "A"', city: 'Oslo' },
      error: '"x@y" is not an e-mail address',
    },
    {
      line: 3,
      fields: { email: 'b@example.com', first_name: '', city: '' },
      error: 'duplicate of b@example.com on line 2',
    },
  ];

  it('writes CSV with the original columns plus error, properly quoted', async () => {
    const text = await renderRejects('csv', ['email', 'first_name', 'city'], rows);
    expect(parse(text)).toEqual([
      ['email', 'first_name', 'city', 'error'],
      ['b@example.com', '', '', 'line 3: duplicate of b@example.com on line 2'],
      ['x@y', 'Ann, "A"', 'Oslo', 'line 7: "x@y" is not an e-mail address'],
    ]);
  });

  it('does not overwrite an input column that is already called error', async () => {
    const text = await renderRejects(
      'csv',
      ['email', 'error'],
      [{ line: 2, fields: { email: 'x', error: 'old' }, error: 'new' }],
    );
    expect(parse(text)).toEqual([
      ['email', 'error', 'import_error'],
      ['x', 'old', 'line 2: new'],
    ]);
  });

  it('writes JSON Lines for JSON Lines input', async () => {
    const text = await renderRejects(
      'jsonl',
      ['email'],
      [{ line: 2, fields: { email: 'x', tags: ['a'] }, error: 'bad' }],
    );
    expect(text).toBe('{"email":"x","tags":["a"],"error":"line 2: bad"}\n');
  });
});

describe('defaultRejectsPath', () => {
  it('puts the rejects beside the input', () => {
    expect(defaultRejectsPath('data/members.csv', 'csv')).toBe('data/members.rejects.csv');
    expect(defaultRejectsPath('members.jsonl', 'jsonl')).toBe('members.rejects.jsonl');
    expect(defaultRejectsPath('-', 'csv')).toBe('loyalty-import-rejects.csv');
  });
});

describe('RejectsWriter files', () => {
  const rows = [{ line: 2, fields: { email: 'ada@example' }, error: 'bad' }];

  it('creates the file readable by its owner only (0600): rejected rows are personal data', async () => {
    const path = join(await tempConfigHome(), 'members.rejects.csv');
    await writeRejects(path, 'csv', ['email'], rows);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(parse(await readFile(path, 'utf8'))).toEqual([
      ['email', 'error'],
      ['ada@example', 'line 2: bad'],
    ]);
  });

  it('tightens an existing rejects file of a wider mode to 0600 and replaces its content', async () => {
    const path = join(await tempConfigHome(), 'members.rejects.csv');
    await writeFile(path, 'a much longer earlier content that must not survive\n'.repeat(10));
    await chmod(path, 0o644);
    await writeRejects(path, 'csv', ['email'], rows);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(parse(await readFile(path, 'utf8'))).toEqual([
      ['email', 'error'],
      ['ada@example', 'line 2: bad'],
    ]);
  });
});

describe('RejectsWriter streaming', () => {
  it('writes nothing, and creates no file, when no row is rejected', async () => {
    const path = join(await tempConfigHome(), 'none.rejects.csv');
    const writer = new RejectsWriter(path, 'csv', ['email']);
    await writer.close();
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes rows out as they come, in pieces, keeping the delimiter and BOM', async () => {
    const path = join(await tempConfigHome(), 'many.rejects.csv');
    const writer = new RejectsWriter(path, 'csv', ['email', 'name'], { delimiter: ';', bom: true });
    let length = 0;
    for (let i = 0; i < 50_000; i++) {
      await writer.add({ line: i + 2, fields: { email: `m${i}@example`, name: `Name ${i}` }, error: 'bad' });
      length += `m${i}@example;Name ${i};line ${i + 2}: bad\n`.length;
    }
    // Before close, all but the last piece (64 KB) is already on disk: nothing is held.
    expect((await stat(path)).size).toBeGreaterThan(length - 64 * 1024);
    await writer.close();
    const text = await readFile(path, 'utf8');
    expect(text.startsWith('\uFEFFemail;name;error\n')).toBe(true);
    expect(text.split('\n')).toHaveLength(50_002);
  });

  it('replaces a file only when committed, and leaves the old one when closed before', async () => {
    const dir = await tempConfigHome();
    const path = join(dir, 'members.rejects.csv');
    await writeFile(path, 'email,error\nold,line 2: old\n');
    const dropped = new RejectsWriter(path, 'csv', ['email'], {}, { replacing: true });
    await dropped.add({ line: 3, fields: { email: 'new' }, error: 'bad' });
    await dropped.close();
    expect(await readFile(path, 'utf8')).toContain('old');
    expect(await readdir(dir)).toEqual(['members.rejects.csv']);
    const kept = new RejectsWriter(path, 'csv', ['email'], {}, { replacing: true });
    await kept.add({ line: 3, fields: { email: 'new' }, error: 'bad' });
    await kept.commit();
    expect(parse(await readFile(path, 'utf8'))).toEqual([
      ['email', 'error'],
      ['new', 'line 3: bad'],
    ]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});

describe('OrderedRejects', () => {
  it('holds rows after a line whose rows may still come, and writes all in line order', async () => {
    const path = join(await tempConfigHome(), 'ordered.rejects.csv');
    const ordered = new OrderedRejects(new RejectsWriter(path, 'csv', ['email']));
    const row = (line: number): RejectedRow => ({ line, fields: { email: `m${line}` }, error: 'bad' });
    await ordered.hold(10); // a batch from line 10 is in flight
    await ordered.add(row(4));
    await ordered.add(row(12));
    await ordered.add(row(15));
    expect(ordered.writer.count).toBe(1); // 12 and 15 wait for the batch
    await ordered.add(row(11)); // the batch's answer names line 11
    await ordered.hold(Number.POSITIVE_INFINITY);
    await ordered.writer.close();
    const lines = (parse(await readFile(path, 'utf8')) as string[][]).slice(1).map((r) => r[1]);
    expect(lines).toEqual(['line 4: bad', 'line 11: bad', 'line 12: bad', 'line 15: bad']);
  });
});

describe('rejects files in this repository', () => {
  // The README walkthrough imports fixtures/members-sample.csv: its rejects file, written beside it,
  // holds personal data and must not show up as a file to commit.
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const inGit = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: root }).status === 0;

  it.skipIf(!inGit)('are ignored by git wherever they are written (skipped outside a git checkout)', () => {
    const written = [
      defaultRejectsPath('fixtures/members-sample.csv', 'csv'),
      defaultRejectsPath('fixtures/members-sample.jsonl', 'jsonl'),
      defaultRejectsPath('fixtures/members-excel-semicolon.csv', 'csv'),
      defaultRejectsPath('members.txt', 'csv'),
      defaultRejectsPath('-', 'csv'),
      defaultRejectsPath('-', 'jsonl'),
    ];
    expect(written).toContain('fixtures/members-sample.rejects.csv');
    const check = spawnSync('git', ['check-ignore', '--no-index', '--verbose', ...written], {
      cwd: root,
      encoding: 'utf8',
    });
    const ignored = check.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[1]);
    expect(ignored).toEqual(written);
  });
});
