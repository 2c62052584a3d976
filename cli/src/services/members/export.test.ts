import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, addMembers, type FakeApi, fakeApiServer, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { csvRecord, EXPORT_COLUMNS } from './export.js';

let api: FakeApi;
const server = fakeApiServer({
  each: (fresh) => {
    api = fresh;
    // A fixed subscribed_at: the mock shows the time of the request for a member without one.
    addMembers(api, 2500, (i) => ({
      first_name: `F${i} "quoted", {braced}`,
      last_name: `L${i}\\`,
      subscribed_at: '2026-11-21 10:15:30',
    }));
  },
});

const lists = () => api.requests.filter((r) => r.path === '/members/list').map((r) => r.body);

describe('loyalty members export (streamed)', { timeout: 20_000 }, () => {
  it('reads the whole list in one unpaged request and writes the same CSV as page by page', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const streamed = await runCli(['members', 'export'], { env });
    expect(streamed.code).toBe(0);
    expect(lists()).toEqual([{ brand_id: 'brand-acme' }]);
    expect(streamed.stderr).toContain('Exported 2,500 members of brand-acme (csv).');

    const paged = await runCli(['members', 'export', '--per-page', '1000'], { env });
    expect(paged.code).toBe(0);
    expect(lists().slice(1)).toEqual([1, 2, 3].map((page) => ({ brand_id: 'brand-acme', page, per_page: 1000 })));
    expect(streamed.stdout.split('\n')).toHaveLength(2502);
    expect(streamed.stdout).toBe(paged.stdout);
  });

  it('an unknown brand: the one brand message, and nothing on stdout (not even the CSV header)', async () => {
    server.use(
      http.post(`${API}/members/list`, () =>
        HttpResponse.json({ message: 'Brand not found.', error: 'not_found' }, { status: 404 }),
      ),
    );
    const result = await runCli(['members', 'export', '--brand', 'brand-nope'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^✖ Brand "brand-nope" not found\.(?: \(request id: [^)]+\))?\n {2}→ It came from --brand\./,
    );
  });

  it('an empty brand still gets the CSV header', async () => {
    api.members.clear();
    const result = await runCli(['members', 'export'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(csvRecord(EXPORT_COLUMNS));
  });

  it('writes the same JSON Lines file as page by page', async () => {
    const dir = await tempConfigHome();
    const env = loggedInEnv(dir);
    expect((await runCli(['members', 'export', '-o', 'a.jsonl'], { env, cwd: dir })).code).toBe(0);
    expect((await runCli(['members', 'export', '-o', 'b.jsonl', '--per-page', '700'], { env, cwd: dir })).code).toBe(0);
    const streamed = await readFile(join(dir, 'a.jsonl'), 'utf8');
    expect(streamed.trim().split('\n')).toHaveLength(2500);
    expect(streamed).toBe(await readFile(join(dir, 'b.jsonl'), 'utf8'));
  });

  it('fails (exit 1, no stack trace) when the list breaks off, saying how far it got', async () => {
    const members = Array.from({ length: 5 }, (_, i) => ({ email: `m${i}@example.com`, identifier: `id-${i}` }));
    const text = `{"message":"Request successful","data":{"total":5,"last_page":1,"next_page_url":null,"per_page":5,"last_page_url":"${API}/members/list?page=1","members":[${members.map((m) => JSON.stringify(m)).join(',')}`;
    server.use(
      http.post(
        `${API}/members/list`,
        () => new HttpResponse(text, { headers: { 'content-type': 'application/json', 'x-request-id': 'req-cut-1' } }),
      ),
    );
    const dir = await tempConfigHome();
    const result = await runCli(['members', 'export', '-o', 'out.csv'], { env: loggedInEnv(dir), cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Export stopped after 5 of 5 members. The member list was cut short: the body ended inside the list',
    );
    expect(result.stderr).toContain('(request id: req-cut-1)');
    expect(result.stderr).toContain('The file is incomplete.');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stderr).not.toContain('Exported');
  });

  it('names --per-page when it is out of range', async () => {
    const result = await runCli(['members', 'export', '--per-page', '0'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--per-page must be 1 to 1000 (got "0").');
    expect(lists()).toEqual([]);
  });
});

describe('csvRecord', () => {
  it('writes what csv-stringify writes with its defaults, field for field', () => {
    const pieces = [
      '',
      'a',
      ',',
      '"',
      '""',
      '\n',
      '\r',
      '\r\n',
      ' ',
      '\t',
      "'",
      '=1+2',
      '-',
      'Zoë',
      '名前',
      '🎉',
      '\\',
      ';',
      'x',
    ];
    const fields: (string | number | boolean | null | undefined)[] = [null, undefined, 0, 1, 12.5, -3, true, false];
    for (const a of pieces) for (const b of pieces) fields.push(a + b, `${a}text${b}`);
    for (let i = 0; i + 13 <= fields.length; i += 7) {
      const record = fields.slice(i, i + 13);
      expect(csvRecord(record), JSON.stringify(record)).toBe(stringify([record]));
    }
    expect(csvRecord(['only'])).toBe(stringify([['only']]));
  });
});
