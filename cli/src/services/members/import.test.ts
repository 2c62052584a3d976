import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { loggedInEnv, type FakeApi, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

let api: FakeApi;
const server = fakeApiServer({
  each: (fresh) => {
    api = fresh;
  },
});

function csv(count: number, extra: string[] = []): string {
  const lines = ['email,first_name,last_name,unsubscribed,subscribed_at'];
  for (let i = 0; i < count; i++) lines.push(`member${i}@example.com,First${i},Last${i},no,2024-05-01 10:00:00`);
  return `${[...lines, ...extra].join('\n')}\n`;
}

async function workspace(content: string) {
  const dir = await tempConfigHome();
  await writeFile(join(dir, 'members.csv'), content);
  return { dir, env: loggedInEnv(dir) };
}

const signups = () => api.requests.filter((r) => r.path === '/members/signups');

describe('loyalty members import', { timeout: 20_000 }, () => {
  it('sends valid rows in batches with idempotency keys, writes rejects, prints new/found/rejected and exits 3', async () => {
    const { dir, env } = await workspace(
      csv(2500, ['not-an-email,X,Y,,', 'member1@example.com,Dup,Row,,', 'late@example.com,A,B,,2999-01-01']),
    );
    api.members.set('member7@example.com', { id: 'existing-7', email: 'member7@example.com' });
    const result = await runCli(['members', 'import', 'members.csv', '--json'], { env, cwd: dir });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({
      rows: 2503,
      batches: 2,
      new: 2499,
      found: 1,
      rejected: 3,
      rejects_file: 'members.rejects.csv',
    });
    expect(signups().map((r) => (r.body as { users: unknown[] }).users.length)).toEqual([2000, 500]);
    expect(signups().every((r) => /^loyalty-import-[0-9a-f]{48}$/.test(r.headers.get('idempotency-key') ?? ''))).toBe(
      true,
    );
    expect((signups()[0]!.body as { users: unknown[] }).users[0]).toEqual({
      email: 'member0@example.com',
      first_name: 'First0',
      last_name: 'Last0',
      unsubscribed: false,
      subscribed_at: '2024-05-01T10:00:00Z',
    });
    const rejects = parse(await readFile(join(dir, 'members.rejects.csv'), 'utf8')) as string[][];
    expect(rejects[0]).toEqual(['email', 'first_name', 'last_name', 'unsubscribed', 'subscribed_at', 'error']);
    expect(rejects.slice(1).map((row) => row[5])).toEqual([
      'line 2502: "not-an-email" is not an e-mail address',
      'line 2503: duplicate of member1@example.com on line 3',
      'line 2504: subscribed_at 2999-01-01 is not in the past',
    ]);
    expect(result.stderr).toContain('3 rows were rejected; they are in members.rejects.csv');
  });

  it('puts rows the API refuses into the rejects file and imports the rest of their batch', async () => {
    const { dir, env } = await workspace(csv(10));
    api.rejectEmail = (email) =>
      email === 'member3@example.com' ? 'The users.3.email must be a valid email address.' : undefined;
    const result = await runCli(['members', 'import', 'members.csv', '--json'], { env, cwd: dir });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ new: 9, rejected: 1, rejected_by_api: 1 });
    expect(signups()).toHaveLength(2);
    const rejects = parse(await readFile(join(dir, 'members.rejects.csv'), 'utf8')) as string[][];
    expect(rejects[1]![0]).toBe('member3@example.com');
    expect(rejects[1]![5]).toBe('line 5: rejected by the API: email: The users.3.email must be a valid email address.');
  });

  it('exits 0 with a human summary when every row is imported, and keeps stdout for the summary only', async () => {
    const { dir, env } = await workspace(csv(3));
    const result = await runCli(['members', 'import', 'members.csv', '--batch-size', '2'], { env, cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Imported members\.csv into brand-acme in [\d.]+s/);
    expect(result.stdout).toMatch(/ new\s+3\n\s+found\s+0\n\s+rejected\s+0\n$/);
    expect(result.stderr).toMatch(/import: 3\/3 rows \(100%\), 2\/2 batches/);
    expect(await readdir(join(dir, 'loyalty', 'imports'))).toEqual([]);
  });

  it('--dry-run sends nothing', async () => {
    const { dir, env } = await workspace(csv(5));
    const result = await runCli(['members', 'import', 'members.csv', '--dry-run'], { env, cwd: dir });
    expect(result.code).toBe(0);
    expect(signups()).toEqual([]);
    expect(result.stdout).toContain('dry run, nothing sent');
  });

  it('reads stdin with -, sniffing JSON Lines', async () => {
    const dir = await tempConfigHome();
    const input = '{"email":"a@example.com","first_name":"Ann"}\n{"email":"b@example.com"}\n';
    const result = await runCli(['members', 'import', '-', '--json'], {
      env: loggedInEnv(dir),
      cwd: dir,
      stdin: input,
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ format: 'jsonl', new: 2 });
  });

  it('after Ctrl-C exits 130 and --resume finishes without creating anyone twice', async () => {
    const { dir, env } = await workspace(csv(50));
    const controller = new AbortController();
    server.events.on('response:mocked', ({ request }) => {
      if (new URL(request.url).pathname === '/members/signups' && signups().length === 2) controller.abort();
    });
    const first = await runCli(['members', 'import', 'members.csv', '--batch-size', '10', '--concurrency', '1'], {
      env,
      cwd: dir,
      signal: controller.signal,
    });
    server.events.removeAllListeners();
    expect(first.code).toBe(130);
    expect(first.stderr).toContain(
      'Continue with: loyalty members import members.csv --batch-size 10 --concurrency 1 --resume',
    );
    const sentBefore = signups().length;

    const refused = await runCli(['members', 'import', 'members.csv'], { env, cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Pass --resume to continue it, or --restart to start over.');

    const resumed = await runCli(['members', 'import', 'members.csv', '--resume', '--json'], { env, cwd: dir });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ new: 50, found: 0, resumed_batches: sentBefore - 1 });
    expect(api.members.size).toBe(50);
    expect(signups().length - sentBefore).toBe(5 - (sentBefore - 1));
  });

  it('imports a semicolon CSV from Excel (BOM, CRLF), lists the columns it does not import once, and writes rejects with ";"', async () => {
    const { dir, env } = await workspace(
      '\uFEFFE-Mail;Vorname;Nachname;Ort;Kundennummer\r\na@example.de;Jörg;Müller;"Köln; Süd";17\r\nnot-an-email;X;Y;Wien;18\r\n',
    );
    const result = await runCli(['members', 'import', 'members.csv', '--json'], { env, cwd: dir });
    expect(result.code, result.stderr).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ rows: 2, new: 1, rejected: 1 });
    expect((signups()[0]!.body as { users: unknown[] }).users).toEqual([
      { email: 'a@example.de', first_name: 'Jörg', last_name: 'Müller' },
    ]);
    expect(result.stderr.match(/not imported/g)).toHaveLength(1);
    expect(result.stderr).toContain('Columns not imported: "Ort", "Kundennummer"');
    const trailing = await workspace('email;first_name;\na@example.com;Ann;\n');
    const unnamed = await runCli(['members', 'import', 'members.csv', '--dry-run'], {
      env: trailing.env,
      cwd: trailing.dir,
    });
    expect(unnamed.stderr).toContain('Columns not imported: column 3 (no name) (no member field;');
    const rejects = await readFile(join(dir, 'members.rejects.csv'), 'utf8');
    expect(rejects.split('\n')[0], 'a BOM and ";" as the input had, so Excel opens it as UTF-8').toBe(
      '\uFEFFE-Mail;Vorname;Nachname;Ort;Kundennummer;error',
    );
    expect(parse(rejects, { delimiter: ';', bom: true })[1]).toEqual([
      'not-an-email',
      'X',
      'Y',
      'Wien',
      '18',
      'line 3: "not-an-email" is not an e-mail address',
    ]);
  });

  it('reads the delimiter from --delimiter', async () => {
    const { dir, env } = await workspace('email|first_name\na@example.com|Ann\n');
    const result = await runCli(['members', 'import', 'members.csv', '--delimiter', 'pipe', '--json'], {
      env,
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((signups()[0]!.body as { users: unknown[] }).users).toEqual([{ email: 'a@example.com', first_name: 'Ann' }]);
    const bad = await runCli(['members', 'import', 'members.csv', '--delimiter', ';;'], { env, cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--delimiter must be one character');
  });

  it('refuses malformed, binary and non-UTF-8 files in one line with file, line and column: exit 2, nothing sent', async () => {
    const cases: Array<[string | Buffer, RegExp]> = [
      [
        'email,name\na@example.com,"Ann\nb@example.com,Bo\n',
        /^✖ members\.csv:2:15: this quoted field is never closed\. .+\n$/,
      ],
      [
        Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x22, 0x0a, 0xff]),
        /^✖ members\.csv:1:8: this is not a text file\. .+\n$/,
      ],
      [
        Buffer.concat([Buffer.from('email\nJ'), Buffer.from([0xf6]), Buffer.from('rg@example.com\n')]),
        /^✖ members\.csv:2:2: this file is not UTF-8 \(byte 0xF6\)\. .+\n$/,
      ],
    ];
    for (const [content, expected] of cases) {
      const { dir, env } = await workspace('');
      await writeFile(join(dir, 'members.csv'), content);
      const result = await runCli(['members', 'import', 'members.csv', '--no-progress'], {
        env: { ...env, CI: '1' },
        cwd: dir,
      });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.replace(/^import: .*\n/gm, '')).toMatch(expected);
    }
    expect(signups()).toEqual([]);
  });

  it('refuses a directory in one line, exit 2', async () => {
    const dir = await tempConfigHome();
    for (const path of ['.', '']) {
      const result = await runCli(['members', 'import', path, '--dry-run'], { env: loggedInEnv(dir), cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/✖ Cannot read .*: it is a directory\./);
    }
  });

  it('on a terminal, prints the columns it does not import after the live view, not into its frame', async () => {
    const { dir, env } = await workspace('email,first_name,city\na@example.com,Ann,Oslo\n');
    const result = await runCli(['members', 'import', 'members.csv'], {
      env: { ...env, CI: '', TERM: 'xterm' },
      cwd: dir,
      tty: true,
    });
    expect(result.code, result.stderr).toBe(0);
    const at = result.stderr.indexOf('Columns not imported: "city"');
    expect(at, result.stderr).toBeGreaterThan(0);
    expect(result.stderr.slice(at), 'nothing of the live view after the line').toBe(
      'Columns not imported: "city" (no member field; --map <field>=<column> reads one).\n',
    );
  });

  it('names the file when it does not exist: a usage error (exit 2), as --help says', async () => {
    const dir = await tempConfigHome();
    const result = await runCli(['members', 'import', 'missing.csv'], { env: loggedInEnv(dir), cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Cannot read missing.csv: no such file.');
    const help = await runCli(['members', 'import', '--help'], { env: loggedInEnv(dir), cwd: dir });
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('2 usage error: a file that is missing or cannot be read');
  });
});
