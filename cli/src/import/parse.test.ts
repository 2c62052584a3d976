import { describe, expect, it } from 'vitest';
import { formatFromName, readImportInput, sniffFormat } from './parse.js';

async function* chunksOf(...parts: string[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

describe('readImportInput (CSV)', () => {
  it('keeps every original column and the line of each record', async () => {
    const input = await readImportInput(chunksOf('email,first_name,shoe size\n', 'a@example.com,Ann,38\nb@example.com,"Bo, Jr.",44\n'), { format: 'csv' });
    expect(input.columns).toEqual(['email', 'first_name', 'shoe size']);
    expect(input.rows).toEqual([
      { line: 2, fields: { email: 'a@example.com', first_name: 'Ann', 'shoe size': '38' } },
      { line: 3, fields: { email: 'b@example.com', first_name: 'Bo, Jr.', 'shoe size': '44' } },
    ]);
  });

  it('handles a BOM, CRLF line ends, quoted newlines and records split across chunks', async () => {
    const input = await readImportInput(chunksOf('\uFEFFemail,note\r\na@exa', 'mple.com,"two\r\nlines"\r\nb@example.com,x\r\n'), { format: 'csv' });
    expect(input.columns).toEqual(['email', 'note']);
    expect(input.rows.map((row) => row.fields)).toEqual([
      { email: 'a@example.com', note: 'two\r\nlines' },
      { email: 'b@example.com', note: 'x' },
    ]);
  });

  it('marks a record with the wrong number of fields instead of failing the file', async () => {
    const input = await readImportInput(chunksOf('email,first_name\na@example.com\nb@example.com,Bo\n'), { format: 'csv' });
    expect(input.rows[0]!.error).toBe('has 1 fields, the header has 2');
    expect(input.rows[1]!.error).toBeUndefined();
  });

  it('stops at broken quoting, naming the line, rather than swallowing the rows after it', async () => {
    await expect(readImportInput(chunksOf('email,name\na@example.com,"Ann"x\nb@example.com,Bo\n'), { format: 'csv' })).rejects.toThrow(
      /The CSV cannot be read: Invalid Closing Quote.*line 2/,
    );
  });

  it('numbers records by the line they end on, across quoted newlines', async () => {
    const input = await readImportInput(chunksOf('email,note\na@example.com,"two\nlines"\nb@example.com,x\n'), { format: 'csv' });
    expect(input.rows.map((row) => row.line)).toEqual([3, 4]);
  });

  it('refuses an empty file', async () => {
    await expect(readImportInput(chunksOf(''), { format: 'csv' })).rejects.toThrow(/empty/);
  });

  it('identifies the input by the SHA-256 of its bytes, however it is chunked', async () => {
    const one = await readImportInput(chunksOf('email\na@example.com\n'));
    const two = await readImportInput(chunksOf('em', 'ail\na@exam', 'ple.com\n'));
    const other = await readImportInput(chunksOf('email\nb@example.com\n'));
    expect(one.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(two.sha256).toBe(one.sha256);
    expect(other.sha256).not.toBe(one.sha256);
  });
});

describe('readImportInput (JSON Lines)', () => {
  it('reads one object per line and collects the keys as columns', async () => {
    const input = await readImportInput(chunksOf('{"email":"a@example.com","first_name":"Ann"}\n\n{"email":"b@exa', 'mple.com","vip":true}'));
    expect(input.format).toBe('jsonl');
    expect(input.columns).toEqual(['email', 'first_name', 'vip']);
    expect(input.rows).toEqual([
      { line: 1, fields: { email: 'a@example.com', first_name: 'Ann' } },
      { line: 3, fields: { email: 'b@example.com', vip: true } },
    ]);
  });

  it('marks lines that are not JSON objects', async () => {
    const input = await readImportInput(chunksOf('{"email":"a@example.com"}\n{broken\n[1,2]\n'), { format: 'jsonl' });
    expect(input.rows.map((row) => row.error)).toEqual([undefined, 'not valid JSON', 'expected a JSON object']);
  });
});

describe('format detection', () => {
  it('uses the file extension when there is one', () => {
    expect(formatFromName('members.CSV')).toBe('csv');
    expect(formatFromName('members.jsonl')).toBe('jsonl');
    expect(formatFromName('members.ndjson')).toBe('jsonl');
    expect(formatFromName('-')).toBeUndefined();
  });

  it('sniffs stdin: JSON Lines start with an object', () => {
    expect(sniffFormat('\uFEFF  {"email":1}')).toBe('jsonl');
    expect(sniffFormat('email,first_name')).toBe('csv');
  });
});
