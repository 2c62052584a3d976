import { Writable } from 'node:stream';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { Output, palette, renderTable } from './output.js';
import { API, fakeApiServer, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { showControls } from './ui/controls.js';

/** A tag name with a screen clear, an OSC 8 link, a C1 CSI, a BEL, DEL and a right-to-left override. */
const HOSTILE = 'VIP\u001b[2J\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007\u009b31m\u007f\u202e';
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach the terminal
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the palette's own colour sequences
const PAINT = /\u001b\[(?:1|2|22|31|32|33|36|39)m/g;

class Capture extends Writable {
  text = '';
  isTTY = true;
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('showControls', () => {
  it('writes C0 (but newline and TAB), DEL, C1 and bidi overrides as escapes', () => {
    expect(showControls('a\u001b[2Jb\u009bc\u007f\u0000\u202e\td\ne')).toBe(
      'a\\x1b[2Jb\\u009bc\\x7f\\x00\\u202e\td\ne',
    );
    expect(showControls('Grüße, 東京 ✔')).toBe('Grüße, 東京 ✔');
  });
});

describe('human output shows controls from the API escaped', () => {
  it('renderTable escapes every cell, also with colours on', () => {
    const table = renderTable([{ tag: HOSTILE }], [{ header: 'tag', value: (row) => row.tag }], palette(true));
    expect(table.replace(PAINT, '')).not.toMatch(RAW_CONTROL);
    expect(table).toContain('VIP\\x1b[2J\\x1b]8;;https://evil.example\\x07click');
    expect(table).toContain('\\u009b31m\\x7f\\u202e');
  });

  it('Output escapes results and messages but keeps its own colours', () => {
    const stdout = new Capture();
    const stderr = new Capture();
    const output = new Output({ stdout, stderr, color: true, env: {} });
    output.table([{ tag: HOSTILE }], [{ header: 'tag', value: (row) => row.tag }]);
    output.result({ tag: HOSTILE }, () => `Tag ${output.out.bold(HOSTILE)}`);
    output.success(`Created ${HOSTILE}`);
    output.warn(HOSTILE);
    output.error(HOSTILE);
    output.info(HOSTILE);
    for (const text of [stdout.text, stderr.text]) {
      expect(text.replace(PAINT, '')).not.toMatch(RAW_CONTROL);
      expect(text).toContain('\\x1b[2J');
    }
    expect(stdout.text).toContain('\u001b[1m'); // bold, the CLI's own
    expect(stderr.text).toContain('\u001b[32m✔\u001b[39m');
  });
});

const server = fakeApiServer();

describe('tables fit the terminal', () => {
  const rows = [
    {
      name: 'A tag with a very long label that goes on and on, well past what a terminal shows',
      uuid: '22222222-2222-4222-8222-222222222222',
      created: '2026-01-01T00:00:00.000Z',
    },
    { name: 'Short', uuid: '33333333-3333-4333-8333-333333333333', created: '2026-01-02T00:00:00.000Z' },
  ];
  const columns = [
    { header: 'name', value: (row: (typeof rows)[number]) => row.name, shrink: true },
    { header: 'uuid', value: (row: (typeof rows)[number]) => row.uuid },
    { header: 'created', value: (row: (typeof rows)[number]) => row.created },
  ];

  it('cuts the free-text column with … to 80 columns and keeps identifiers whole', () => {
    const lines = renderTable(rows, columns, palette(false), 80).trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[1]).toBe('A tag with a ve…  22222222-2222-4222-8222-222222222222  2026-01-01T00:00:00.000Z');
    expect(lines[2]).toMatch(/^Short {2,}33333333-3333-4333-8333-333333333333/);
  });

  it('without a width (a pipe), keeps every character', () => {
    expect(renderTable(rows, columns, palette(false))).toContain(rows[0]?.name);
  });
});

describe('a real command on the mock API', { timeout: 20_000 }, () => {
  it('loyalty tags list shows a control-laden tag name escaped; --json escapes C0 as JSON does', async () => {
    const tag = {
      tag: HOSTILE,
      external_reference: 'hostile',
      uuid: '22222222-2222-4222-8222-222222222222',
      brand_id: 'brand-acme',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    server.use(http.get(`${API}/tags`, () => HttpResponse.json({ success: true, data: [tag] })));
    const env = loggedInEnv(await tempConfigHome());
    const table = await runCli(['tags', 'list'], { env, tty: true });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.replace(PAINT, '')).not.toMatch(RAW_CONTROL);
    expect(table.stdout).toContain('VIP\\x1b[2J');
    const json = await runCli(['tags', 'list', '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toContainEqual(expect.objectContaining({ tag: HOSTILE }));
  });

  it('loyalty tags list on an 80-column terminal fits in 80 columns; through a pipe it keeps the full label', async () => {
    const tag = {
      tag: 'Members who joined at the spring fair and asked for the newsletter in German',
      external_reference: 'spring-fair-de',
      uuid: '22222222-2222-4222-8222-222222222222',
      brand_id: 'brand-acme',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    server.use(http.get(`${API}/tags`, () => HttpResponse.json({ success: true, data: [tag] })));
    const env = loggedInEnv(await tempConfigHome());
    const terminal = await runCli(['tags', 'list'], { env, tty: true, columns: 80 });
    expect(terminal.code, terminal.stderr).toBe(0);
    for (const line of terminal.stdout.replace(PAINT, '').trimEnd().split('\n'))
      expect(line.length, line).toBeLessThanOrEqual(80);
    expect(terminal.stdout).toContain('…');
    expect(terminal.stdout).toContain(tag.uuid);
    expect(terminal.stdout).toContain('spring-fair-de');
    // Brand and creation time give way to the label; a pipe gets every column and character.
    expect(terminal.stdout).toMatch(/^TAG +EXTERNAL REFERENCE +UUID\n/);
    const piped = await runCli(['tags', 'list'], { env });
    expect(piped.stdout).toContain(tag.tag);
    expect(piped.stdout).toMatch(/^TAG +EXTERNAL REFERENCE +UUID +BRAND +CREATED\n/);
  });

  it('an error message from the API is shown escaped too', async () => {
    server.use(
      http.get(`${API}/tags`, () =>
        HttpResponse.json({ message: `No \u001b]0;pwned\u0007 ${HOSTILE}`, error: 'bad_request' }, { status: 400 }),
      ),
    );
    const result = await runCli(['tags', 'list'], { env: loggedInEnv(await tempConfigHome()), tty: true });
    expect(result.code).toBe(1);
    expect(result.stderr.replace(PAINT, '')).not.toMatch(RAW_CONTROL);
    expect(result.stderr).toContain('\\x1b]0;pwned\\x07');
  });
});
