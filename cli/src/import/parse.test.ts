import { describe, expect, it } from 'vitest';
import { formatFromName, openImportSource, type ReadOptions, type SourceRow, sniffFormat } from './parse.js';

/** The whole input read through the streaming source, for assertions. */
async function readImportInput(chunks: AsyncIterable<Buffer | string>, options?: ReadOptions) {
  const source = await openImportSource(chunks, options);
  const rows: SourceRow[] = [];
  for await (const row of source.rows) rows.push(row);
  return { ...source, columns: [...source.columns], rows, sha256: source.sha256() };
}

async function* chunksOf(...parts: string[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

describe('readImportInput (CSV)', () => {
  it('keeps every original column and the line of each record', async () => {
    const input = await readImportInput(
      chunksOf('email,first_name,shoe size\n', 'a@example.com,Ann,38\nb@example.com,"Bo, Jr.",44\n'),
      { format: 'csv' },
    );
    expect(input.columns).toEqual(['email', 'first_name', 'shoe size']);
    expect(input.rows).toEqual([
      { line: 2, fields: { email: 'a@example.com', first_name: 'Ann', 'shoe size': '38' } },
      { line: 3, fields: { email: 'b@example.com', first_name: 'Bo, Jr.', 'shoe size': '44' } },
    ]);
  });

  it('handles a BOM, CRLF line ends, quoted newlines and records split across chunks', async () => {
    const input = await readImportInput(
      chunksOf('\uFEFFemail,note\r\na@exa', 'mple.com,"two\r\nlines"\r\nb@example.com,x\r\n'),
      { format: 'csv' },
    );
    expect(input.columns).toEqual(['email', 'note']);
    expect(input.rows.map((row) => row.fields)).toEqual([
      { email: 'a@example.com', note: 'two\r\nlines' },
      { email: 'b@example.com', note: 'x' },
    ]);
  });

  it('marks a record with the wrong number of fields instead of failing the file', async () => {
    const input = await readImportInput(chunksOf('email,first_name\na@example.com\nb@example.com,Bo\n'), {
      format: 'csv',
    });
    expect(input.rows[0]!.error).toBe('has 1 fields, the header has 2');
    expect(input.rows[1]!.error).toBeUndefined();
  });

  it('stops at broken quoting, naming the line, rather than swallowing the rows after it', async () => {
    await expect(
      readImportInput(chunksOf('email,name\na@example.com,"Ann"x\nb@example.com,Bo\n'), { format: 'csv' }),
    ).rejects.toThrow(/^input:2:20: text after the closing " of a field\./);
  });

  it('numbers records by the line they end on, across quoted newlines', async () => {
    const input = await readImportInput(chunksOf('email,note\na@example.com,"two\nlines"\nb@example.com,x\n'), {
      format: 'csv',
    });
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
    const input = await readImportInput(
      chunksOf('{"email":"a@example.com","first_name":"Ann"}\n\n{"email":"b@exa', 'mple.com","vip":true}'),
    );
    expect(input.format).toBe('jsonl');
    expect(input.columns).toEqual(['email', 'first_name', 'vip']);
    expect(input.rows).toEqual([
      { line: 1, fields: { email: 'a@example.com', first_name: 'Ann' } },
      { line: 3, fields: { email: 'b@example.com', vip: true } },
    ]);
  });

  it('refuses JSON Lines that are not UTF-8, and a --delimiter for them', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('{"email":"a@example.com","name":"J'),
      Buffer.from([0xf6]),
      Buffer.from('rg"}\n'),
    ]);
    await expect(
      readImportInput(
        (async function* () {
          yield latin1;
        })(),
        { name: 'x.jsonl' },
      ),
    ).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^x\.jsonl:1:35: this file is not UTF-8 \(byte 0xF6\)/),
    });
    await expect(readImportInput(chunksOf('{"email":"a@example.com"}\n'), { delimiter: ';' })).rejects.toThrow(
      '--delimiter applies to CSV input only.',
    );
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

describe('readImportInput (real-world CSV files)', () => {
  const read = (text: string | Buffer, options: { delimiter?: string } = {}) =>
    readImportInput(
      (async function* () {
        yield Buffer.from(text);
      })(),
      { format: 'csv', name: 'members.csv', ...options },
    );

  it('detects a semicolon delimiter (Excel in many European locales), with a BOM and CRLF line ends', async () => {
    const input = await read(
      '\uFEFF"E-Mail";"Vorname";Ort\r\n"a@example.de";"Jörg";"Köln, Süd"\r\nb@example.de;Bo;Wien\r\n',
    );
    expect(input.columns).toEqual(['E-Mail', 'Vorname', 'Ort']);
    expect(input.delimiter).toBe(';');
    expect(input.rows).toEqual([
      { line: 2, fields: { 'E-Mail': 'a@example.de', Vorname: 'Jörg', Ort: 'Köln, Süd' } },
      { line: 3, fields: { 'E-Mail': 'b@example.de', Vorname: 'Bo', Ort: 'Wien' } },
    ]);
  });

  it("detects tabs, keeps commas as the default, and honours Excel's sep= line", async () => {
    expect((await read('email\tname\na@example.com\tAnn, Lee\n')).rows[0]!.fields).toEqual({
      email: 'a@example.com',
      name: 'Ann, Lee',
    });
    expect((await read('email\na@example.com\n')).delimiter).toBe(',');
    const sep = await read('sep=;\r\nemail;name\r\na@example.com;Ann\r\n');
    expect(sep.columns).toEqual(['email', 'name']);
    expect(sep.rows).toEqual([{ line: 3, fields: { email: 'a@example.com', name: 'Ann' } }]);
  });

  it('takes the delimiter from --delimiter over detection', async () => {
    const input = await read('email;name|city\na@example.com;x|Oslo\n', { delimiter: '|' });
    expect(input.columns).toEqual(['email;name', 'city']);
  });

  it('points at file, line and column of an unterminated quote: a usage error (exit 2)', async () => {
    const error = await read('email,name\na@example.com,Ann\nb@example.com,"Bo\nc@example.com,Cy\n').catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ exitCode: 2, hint: undefined });
    expect((error as Error).message).toMatch(/^members\.csv:3:15: this quoted field is never closed\. /);
  });

  it('does not count a BOM as a column, nor let it hide the quote that opens the first field', async () => {
    await expect(read('\uFEFF"email\na@example.com\n')).rejects.toThrow(
      /^members\.csv:1:1: this quoted field is never closed/,
    );
    await expect(read('\uFEFFemail,"name\na@example.com,x\n')).rejects.toThrow(
      /^members\.csv:1:7: this quoted field is never closed/,
    );
    await expect(read('\uFEFFemail,na"me\na@example.com,x\n')).rejects.toThrow(/^members\.csv:1:9: a " inside a field/);
  });

  it('points at a quote inside an unquoted field and at text after a closing quote', async () => {
    await expect(read('email,name\na@example.com,Ann "Bo" Lee\n')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^members\.csv:2:19: /),
    });
    await expect(read('email,name\na@example.com,"Ann"x\n')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^members\.csv:2:20: /),
    });
  });

  it('refuses a binary file as such: file, line, column, exit 2', async () => {
    const error = await read(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x22, 0x0a])).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ exitCode: 2 });
    expect((error as Error).message).toMatch(/^members\.csv:1:8: this is not a text file/);
  });

  it('refuses a file that is not UTF-8, naming the byte and how to convert it', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('email,name\na@example.com,J'),
      Buffer.from([0xf6]),
      Buffer.from('rg\n'),
    ]);
    const error = await read(latin1).catch((e: unknown) => e);
    expect(error).toMatchObject({ exitCode: 2 });
    expect((error as Error).message).toMatch(/^members\.csv:2:16: this file is not UTF-8 \(byte 0xF6\)\. .*iconv/);
    await expect(read(Buffer.from('\uFEFFemail\n', 'utf16le'))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/UTF-16/),
    });
    expect((error as Error).message).toMatch(/`iconv -f WINDOWS-1252 -t UTF-8 members\.csv > utf8\.csv`$/);
  });

  it('calls bytes with control characters and no NUL a binary file, not a text in another encoding', async () => {
    const bytes = Buffer.from([0x65, 0x6d, 0x0a, 0x95, 0x03, 0x1f, 0xc3, 0x28, 0x07, 0x0a]);
    await expect(read(bytes)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^members\.csv:2:1: this is not a text file/),
    });
  });

  it('locates quote problems and bad bytes the same when the file arrives a byte at a time', async () => {
    const bytewise = (text: string | Buffer) =>
      readImportInput(
        (async function* () {
          for (const byte of Buffer.from(text)) yield Buffer.from([byte]);
        })(),
        { format: 'csv', name: 'x.csv' },
      );
    await expect(bytewise('email;name\r\na@example.com;"Jörg\r\nb;c\r\n')).rejects.toThrow(
      /^x\.csv:2:15: this quoted field is never closed/,
    );
    await expect(bytewise('email;name\na@example.com;Jö "B"\n')).rejects.toThrow(/^x\.csv:2:18: a " inside a field/);
    await expect(bytewise(Buffer.concat([Buffer.from('email\nö'), Buffer.from([0xe9, 0x0a])]))).rejects.toThrow(
      /^x\.csv:2:2: this file is not UTF-8 \(byte 0xE9\)/,
    );
  });

  it('accepts UTF-8 characters split across chunks', async () => {
    const bytes = Buffer.from('email,name\na@example.com,Jörg 😀\n');
    const chunks = (async function* () {
      for (const byte of bytes) yield Buffer.from([byte]);
    })();
    const input = await readImportInput(chunks, { format: 'csv', name: 'x.csv' });
    expect(input.rows[0]!.fields).toEqual({ email: 'a@example.com', name: 'Jörg 😀' });
  });
});
