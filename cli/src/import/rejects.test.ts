import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { tempConfigHome } from '../testing/run-cli.js';
import { defaultRejectsPath, renderRejects, writeRejects } from './rejects.js';

describe('renderRejects', () => {
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

  it('writes CSV with the original columns plus error, in input order, properly quoted', () => {
    const text = renderRejects('csv', ['email', 'first_name', 'city'], rows);
    expect(parse(text)).toEqual([
      ['email', 'first_name', 'city', 'error'],
      ['b@example.com', '', '', 'line 3: duplicate of b@example.com on line 2'],
      ['x@y', 'Ann, "A"', 'Oslo', 'line 7: "x@y" is not an e-mail address'],
    ]);
  });

  it('does not overwrite an input column that is already called error', () => {
    const text = renderRejects(
      'csv',
      ['email', 'error'],
      [{ line: 2, fields: { email: 'x', error: 'old' }, error: 'new' }],
    );
    expect(parse(text)).toEqual([
      ['email', 'error', 'import_error'],
      ['x', 'old', 'line 2: new'],
    ]);
  });

  it('writes JSON Lines for JSON Lines input', () => {
    const text = renderRejects('jsonl', ['email'], [{ line: 2, fields: { email: 'x', tags: ['a'] }, error: 'bad' }]);
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

describe('writeRejects', () => {
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
