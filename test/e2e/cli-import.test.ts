// End to end: the built `loyalty members import` against the real server and its database.
// A 10,000-row CSV with 13 bad rows is killed (SIGKILL) after its first acknowledged batch and
// resumed; the brand must end up with exactly the valid rows, once each.
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';
import { closedPortUrl } from '#test-helpers/closed-port.js';

const ROWS = 10_000;
const BATCH_SIZE = 250;
const COLUMNS = ['email', 'first_name', 'last_name', 'subscribed_at', 'store'];

/** Data row n (1-based) is on line n + 1 of the file. */
const bad = new Map<number, { email?: string; first_name?: string; subscribed_at?: string; why: RegExp }>([
  [3, { email: 'member3.example.org', why: /is not an e-mail address/ }],
  [250, { email: 'member250@', why: /is not an e-mail address/ }],
  [251, { email: 'member 251@example.org', why: /is not an e-mail address/ }],
  [1999, { email: 'member1999@example', why: /is not an e-mail address/ }],
  [2600, { email: '@example.org', why: /is not an e-mail address/ }],
  [4100, { email: 'member4100@@example.org', why: /is not an e-mail address/ }],
  [5001, { email: 'member5001@exa_mple.org', why: /is not an e-mail address/ }],
  [6200, { email: 'member..6200@example.org', why: /is not an e-mail address/ }],
  [8000, { email: 'member8000@example-.org', why: /is not an e-mail address/ }],
  [9999, { email: 'member9999', why: /is not an e-mail address/ }],
  [5000, { first_name: 'N'.repeat(200), why: /first_name is longer than 191 characters/ }],
  [7777, { subscribed_at: '2099-01-01 00:00:00', why: /subscribed_at .* is not in the past/ }],
  // The same address as row 12 in other case: members are unique per organization on lower(email).
  [9000, { email: 'MEMBER12@Example.ORG', why: /duplicate of MEMBER12@Example\.ORG on line 13/ }],
]);
const VALID = ROWS - bad.size;

function row(n: number): Record<string, string> {
  const base = {
    email: `member${n}@example.org`,
    first_name: `First${n}`,
    last_name: n % 3 === 0 ? `O'Brien, ${n}` : `Last${n}`,
    subscribed_at: n % 2 === 0 ? '2024-05-01 10:00:00' : '',
    store: `store-${n % 7}`,
  };
  const { why: _why, ...override } = bad.get(n) ?? { why: /./ };
  return { ...base, ...override };
}

const csvCell = (value: string): string => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
const csv = `${[COLUMNS.join(','), ...Array.from({ length: ROWS }, (_, i) => COLUMNS.map((c) => csvCell(row(i + 1)[c]!)).join(','))].join('\n')}\n`;

let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer();
  cli = await cliSandbox(live.url);
  await writeFile(path.join(cli.dir, 'members.csv'), csv);
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

/** Permission bits of a file in the sandbox. */
const fileMode = async (name: string): Promise<number> => (await stat(path.resolve(cli.dir, name))).mode & 0o777;

/** Members of brand-acme whose e-mail is like `pattern` (the big file's are member…@). */
const brandMembers = async (pattern = 'member%'): Promise<number> =>
  Number(
    (
      await live.db.sql`SELECT count(*)::int AS n FROM brand_members bm JOIN members m ON m.id = bm.member_id
    WHERE bm.brand_id = 'brand-acme' AND lower(m.email) LIKE ${pattern}`
    )[0]!.n,
  );

it('--dry-run validates every row, writes the rejects file and creates nothing', async () => {
  expect(await brandMembers('%')).toBe(0);
  const result = await cli.run(['members', 'import', 'members.csv', '--dry-run']);
  expect(result.code, describeRun(result)).toBe(3);
  expect(result.stdout).toContain(
    `Checked members.csv: 10,000 rows, 9,987 valid, in 5 batches (dry run, nothing sent).`,
  );
  expect(result.stdout).toMatch(/rejected\s+13\s+→ members\.rejects\.csv/);
  expect(await fileMode('members.rejects.csv'), 'rejected rows are personal data').toBe(0o600);
  expect(await brandMembers('%')).toBe(0);
  expect(Number((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]!.n)).toBe(0);
  expect(existsSync(path.join(cli.dir, 'config/loyalty/imports'))).toBe(false);
});

it('with a wrong client secret the real server says 401: exit 4, one line, nothing created, no checkpoint; the same command after fixing it', async () => {
  await writeFile(path.join(cli.dir, 'few.csv'), 'email\nfew1@example.org\nfew2@example.org\n');
  const args = ['members', 'import', 'few.csv', '--checkpoint', 'few-checkpoint.json'];
  const refused = await cli.run(args, { env: { LOYALTY_CLIENT_SECRET: 'not-the-secret' } });
  expect(refused.code, describeRun(refused)).toBe(4);
  expect(refused.stdout).toBe('');
  expect(refused.stderr).toContain('Nothing was imported; after fixing the cause, run the same command again.\n');
  expect(refused.stderr).toMatch(
    /\n✖ The API refused the client credentials \(invalid_client\)\. \(request id: [^)]+\)\n\s+→ Check them with `loyalty config list`, then run `loyalty login`\.\n$/,
  );
  expect(refused.stderr).not.toMatch(/^\s+at /m);
  expect(await brandMembers('%')).toBe(0);
  expect(existsSync(path.join(cli.dir, 'few-checkpoint.json'))).toBe(false);

  const again = await cli.run(args);
  expect(again.code, describeRun(again)).toBe(0);
  expect(again.stdout).toMatch(/^\s+new\s+2$/m);
  expect(await brandMembers('few%')).toBe(2);
  expect(existsSync(path.join(cli.dir, 'few-checkpoint.json'))).toBe(false);
});

it('with the server down the import fails fast and leaves no checkpoint: once it is up, the same command imports', async () => {
  await writeFile(path.join(cli.dir, 'down.csv'), 'email\ndown1@example.org\ndown2@example.org\n');
  const args = ['members', 'import', 'down.csv', '--checkpoint', 'down-checkpoint.json'];
  const started = Date.now();
  const down = await cli.run(args, { env: { LOYALTY_API_URL: await closedPortUrl() } });
  const seconds = (Date.now() - started) / 1000;
  expect(down.code, describeRun(down)).toBe(1);
  expect(down.stderr).toMatch(/✖ Cannot reach the API at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  expect(down.stderr).toContain('Nothing was imported; after fixing the cause, run the same command again.');
  // Node's start-up included, on a busy machine; before, the retries took about 10 s.
  expect(seconds, describeRun(down)).toBeLessThan(5);
  expect(existsSync(path.join(cli.dir, 'down-checkpoint.json'))).toBe(false);

  const up = await cli.run(args);
  expect(up.code, describeRun(up)).toBe(0);
  expect(up.stdout).toMatch(/^\s+new\s+2$/m);
});

it('survives SIGKILL mid-way: --resume creates exactly the valid rows once, exit 3, rejects file with the bad rows', async () => {
  const checkpoint = path.join(cli.dir, 'import-checkpoint.json');
  const args = [
    'members',
    'import',
    'members.csv',
    '--batch-size',
    String(BATCH_SIZE),
    '--checkpoint',
    'import-checkpoint.json',
  ];
  const first = cli.spawn(args);

  // Kill as soon as the checkpoint shows an acknowledged batch, like a machine losing power.
  let acknowledgedAtKill = 0;
  let batchCount = 0;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && first.child.exitCode === null) {
    try {
      const state = JSON.parse(await readFile(checkpoint, 'utf8')) as {
        batch_count: number;
        acknowledged: Record<string, unknown>;
      };
      acknowledgedAtKill = Object.keys(state.acknowledged).length;
      batchCount = state.batch_count;
      if (acknowledgedAtKill >= 1) break;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  first.child.kill('SIGKILL');
  const killed = await first.exited;
  expect(killed.signal, `the import ended before it could be killed:\n${describeRun(killed)}`).toBe('SIGKILL');
  expect(batchCount).toBe(Math.ceil(ROWS / BATCH_SIZE));
  expect(acknowledgedAtKill).toBeGreaterThanOrEqual(1);

  // (The server may still finish a batch that was in flight at the kill: the resume must cope.)
  const afterKill = await brandMembers();
  const stillSaved = JSON.parse(await readFile(checkpoint, 'utf8')) as { acknowledged: Record<string, unknown> };
  expect(await fileMode(checkpoint), "the checkpoint holds rejected rows' errors: 0600").toBe(0o600);
  const savedBatches = Object.keys(stillSaved.acknowledged).length;
  expect(savedBatches, 'the checkpoint must show an unfinished import').toBeLessThan(batchCount);
  expect(afterKill).toBeGreaterThan(0);
  expect(afterKill).toBeLessThan(VALID);

  // Without --resume, an unfinished checkpoint stops the command.
  const refused = await cli.run(args);
  expect(refused.code, describeRun(refused)).toBe(1);
  expect(refused.stderr).toContain(
    `An unfinished import of this file exists (${savedBatches} of ${batchCount} batches sent).`,
  );

  const resumed = await cli.run([...args, '--resume']);
  expect(resumed.code, describeRun(resumed)).toBe(3);
  expect(resumed.stdout).toMatch(
    new RegExp(
      `Imported members\\.csv into brand-acme in [\\d.]+s \\([\\d,]+ rows/s, resumed after ${savedBatches} batches\\)`,
    ),
  );
  expect(resumed.stdout).toMatch(/^\s+new\s+9,987$/m);
  expect(resumed.stdout).toMatch(/^\s+found\s+0$/m);
  expect(resumed.stdout).toMatch(/^\s+rejected\s+13\s+→ members\.rejects\.csv$/m);
  expect(resumed.stderr).toContain('13 rows were rejected; they are in members.rejects.csv.');
  expect(resumed.stderr).not.toContain('\u001b[');
  expect(existsSync(checkpoint), 'the checkpoint is deleted when the import completes').toBe(false);

  // The database: every valid row once, nothing else.
  expect(await brandMembers()).toBe(VALID);
  const [counts] = await live.db.sql`
    SELECT count(*)::int AS total, count(DISTINCT lower(email))::int AS distinct_emails
    FROM members WHERE organization_id = 'org-acme' AND lower(email) LIKE 'member%'`;
  expect(counts).toEqual({ total: VALID, distinct_emails: VALID });
  const validEmails = Array.from({ length: ROWS }, (_, i) => i + 1)
    .filter((n) => !bad.has(n))
    .map((n) => `member${n}@example.org`);
  const [absent] = await live.db.sql`
    SELECT count(*)::int AS missing FROM unnest(${validEmails}::text[]) AS e(email)
    WHERE NOT EXISTS (SELECT 1 FROM members m WHERE lower(m.email) = e.email)`;
  expect(absent!.missing).toBe(0);
  const sample = await live.db.sql`
    SELECT m.email, m.first_name, m.last_name, to_char(bm.subscribed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS subscribed_at
    FROM members m JOIN brand_members bm ON bm.member_id = m.id AND bm.brand_id = 'brand-acme'
    WHERE lower(m.email) IN ('member1@example.org', 'member12@example.org', 'member6000@example.org', 'member10000@example.org')`;
  expect(sample.map((r) => ({ ...r })).sort((a, b) => (String(a.email) < String(b.email) ? -1 : 1))).toEqual([
    {
      email: 'member10000@example.org',
      first_name: 'First10000',
      last_name: 'Last10000',
      subscribed_at: '2024-05-01 10:00:00',
    },
    {
      email: 'member12@example.org',
      first_name: 'First12',
      last_name: "O'Brien, 12",
      subscribed_at: '2024-05-01 10:00:00',
    },
    // No subscribed_at in the file: the server's "now".
    {
      email: 'member1@example.org',
      first_name: 'First1',
      last_name: 'Last1',
      subscribed_at: expect.stringMatching(new RegExp(`^${new Date().toISOString().slice(0, 4)}-\\d\\d-\\d\\d `)),
    },
    {
      email: 'member6000@example.org',
      first_name: 'First6000',
      last_name: "O'Brien, 6000",
      subscribed_at: '2024-05-01 10:00:00',
    },
  ]);
  const badEmails = [...bad.values()].flatMap((b) => (b.email ? [b.email.toLowerCase()] : []));
  const badInDb = await live.db
    .sql`SELECT email FROM members WHERE lower(email) IN ${live.db.sql(badEmails)} AND lower(email) <> 'member12@example.org'`;
  expect(badInDb).toHaveLength(0);
  for (const n of [5000, 7777]) {
    expect(await live.db.sql`SELECT 1 FROM members WHERE lower(email) = ${`member${n}@example.org`}`).toHaveLength(0);
  }

  // The rejects file: the original columns plus `error`, exactly the bad rows, in file order.
  const rejects = parse(await readFile(path.join(cli.dir, 'members.rejects.csv'), 'utf8'), { columns: true }) as Array<
    Record<string, string>
  >;
  const header = (await readFile(path.join(cli.dir, 'members.rejects.csv'), 'utf8')).split('\n')[0];
  expect(await fileMode('members.rejects.csv')).toBe(0o600);
  expect(header).toBe([...COLUMNS, 'error'].join(','));
  const badRows = [...bad.keys()].sort((a, b) => a - b);
  expect(rejects).toHaveLength(bad.size);
  rejects.forEach((reject, i) => {
    const n = badRows[i]!;
    const { error, ...original } = reject;
    expect(original).toEqual(row(n));
    expect(error).toMatch(new RegExp(`^line ${n + 1}: `));
    expect(error).toMatch(bad.get(n)!.why);
  });
});

it('imports a semicolon CSV as Excel writes it (BOM, CRLF, quoted ";"), naming the columns it does not import once', async () => {
  const fixture = path.resolve(import.meta.dirname, '../../fixtures/members-excel-semicolon.csv');
  await writeFile(path.join(cli.dir, 'excel.csv'), await readFile(fixture));
  const result = await cli.run(['members', 'import', 'excel.csv']);
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout).toMatch(/^\s+new\s+4$/m);
  expect(result.stderr.match(/Columns not imported/g)).toEqual(['Columns not imported']);
  expect(result.stderr).toContain('Columns not imported: "Kundennummer", "Filiale"');
  const rows = await live.db
    .sql`SELECT email, first_name, last_name FROM members WHERE email LIKE '%@example.d_' OR email LIKE '%@example.at' ORDER BY email`;
  expect(rows.map((r) => ({ ...r }))).toEqual([
    { email: 'anna.schmidt@example.de', first_name: 'Anna', last_name: 'Schmidt' },
    { email: 'j.mueller@example.de', first_name: 'Jürgen', last_name: 'Müller' },
    { email: 'lea.weiss@example.at', first_name: 'Lea "Leni"', last_name: 'Weiß' },
    { email: 'ole@example.dk', first_name: 'Øle', last_name: null },
  ]);
});

it('imports the opt-outs of a German Excel export ("Abgemeldet": yes, ja) as unsubscribed', async () => {
  await writeFile(
    path.join(cli.dir, 'abgemeldet.csv'),
    '\uFEFFE-Mail;Vorname;Nachname;Abgemeldet;Anmeldedatum\r\n' +
      'ab1@example.de;Anna;Schmidt;yes;2024-05-01\r\n' +
      'ab2@example.de;Bernd;Meier;nein;2024-05-02\r\n' +
      'ab3@example.de;Clara;Wolf;ja;\r\n',
  );
  const result = await cli.run(['members', 'import', 'abgemeldet.csv']);
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stderr).not.toContain('Columns not imported');
  const rows = await live.db
    .sql`SELECT m.email, bm.unsubscribed FROM brand_members bm JOIN members m ON m.id = bm.member_id
    WHERE m.email LIKE 'ab_@example.de' ORDER BY m.email`;
  expect(rows.map((r) => ({ ...r }))).toEqual([
    { email: 'ab1@example.de', unsubscribed: true },
    { email: 'ab2@example.de', unsubscribed: false },
    { email: 'ab3@example.de', unsubscribed: true },
  ]);
});

it('stops at a consent-looking column it cannot read: exit 2, naming --map, nothing sent', async () => {
  const before = Number((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]!.n);
  await writeFile(
    path.join(cli.dir, 'unread.csv'),
    'E-Mail;Vorname;Newsletter-Abmeldung am\r\nun1@example.de;Uta;2024-03-01\r\nun2@example.de;Udo;\r\n',
  );
  const result = await cli.run(['members', 'import', 'unread.csv', '--checkpoint', 'unread-checkpoint.json']);
  expect(result.code, describeRun(result)).toBe(2);
  expect(result.stderr).toContain(
    '✖ The column "Newsletter-Abmeldung am" looks like consent (opt-out or opt-in) but is not read; nothing was sent.',
  );
  expect(result.stderr).toContain("--map 'unsubscribed=Newsletter-Abmeldung am'");
  expect(result.stdout).toBe('');
  expect(existsSync(path.join(cli.dir, 'unread-checkpoint.json'))).toBe(false);
  expect(Number((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]!.n)).toBe(before);
});

it('refuses a binary file, a non-UTF-8 file and broken quoting in one line with file:line:column, exit 2, nothing created', async () => {
  const before = Number((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]!.n);
  const node = await readFile(process.execPath);
  const cases: Array<[string, Buffer | string, RegExp]> = [
    [
      'program.csv',
      node.subarray(0, 64 * 1024),
      /^✖ program\.csv:1:\d+: this is not a text file\. Export the data as CSV \(UTF-8\) or JSON Lines\.$/,
    ],
    [
      'latin1.csv',
      Buffer.concat([Buffer.from('email;name\r\nj@example.org;J'), Buffer.from([0xf6]), Buffer.from('rg\r\n')]),
      /^✖ latin1\.csv:2:16: this file is not UTF-8 \(byte 0xF6\)\. .*`iconv -f WINDOWS-1252 -t UTF-8 latin1\.csv > utf8\.csv`$/,
    ],
    [
      'quote.csv',
      'email,name\nq1@example.org,Ann\nq2@example.org,"Bo\nq3@example.org,Cy\n',
      /^✖ quote\.csv:3:16: this quoted field is never closed\. /,
    ],
  ];
  for (const [name, content, expected] of cases) {
    await writeFile(path.join(cli.dir, name), content);
    const result = await cli.run(['members', 'import', name]);
    expect(result.code, describeRun(result)).toBe(2);
    const lines = result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('import: '));
    expect(lines, describeRun(result)).toHaveLength(1);
    expect(lines[0]).toMatch(expected);
    expect(result.stdout).toBe('');
  }
  expect(Number((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]!.n)).toBe(before);
});
