// End to end: the built `loyalty points import` against the real server and its database. Points
// move only through the API (storecard scans); every test counts the transactions the server
// recorded, so a row credited twice shows up as a second transaction or a wrong balance.
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';
import { until } from '#test-helpers/until.js';

let live: LiveServer;
let cli: CliSandbox;
let globex: CliSandbox;

beforeAll(async () => {
  // One scan (and perhaps one pass) per row: the default 600 requests a minute would bound the test, not the import.
  live = await startLiveServer({ rateLimitToken: 1_000_000 }, { worker: false });
  cli = await cliSandbox(live.url);
  globex = await cliSandbox(live.url, {
    LOYALTY_CLIENT_ID: 'globex-admin',
    LOYALTY_CLIENT_SECRET: 'globex-admin-secret',
    LOYALTY_BRAND: 'brand-globex',
  });
});
afterAll(async () => {
  await cli?.cleanup();
  await globex?.cleanup();
  await live?.close();
});

async function seedMembers(sandbox: CliSandbox, file: string, emails: readonly string[]): Promise<void> {
  await writeFile(path.join(sandbox.dir, file), `email\n${emails.join('\n')}\n`);
  const seeded = await sandbox.run(['members', 'import', file]);
  expect(seeded.code, describeRun(seeded)).toBe(0);
}

/** The card-points balance of each member whose e-mail is like `pattern` and who holds a pass. */
async function balances(pattern: string): Promise<Map<string, number>> {
  const rows = await live.db.sql<{ email: string; balance: number }[]>`
    SELECT m.email, p.balance FROM passes p JOIN members m ON m.id = p.member_id
    WHERE p.storecard_id = 'card-points' AND m.email LIKE ${pattern}`;
  return new Map(rows.map((r) => [r.email, r.balance]));
}

async function transactions(pattern: string): Promise<number> {
  const [row] = await live.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM storecard_transactions t JOIN passes p ON p.id = t.pass_id
    JOIN members m ON m.id = p.member_id WHERE m.email LIKE ${pattern}`;
  return row?.n ?? 0;
}

const csv = (rows: ReadonlyArray<readonly (string | number)[]>): string =>
  `${['email,storecard,points', ...rows.map((r) => r.join(','))].join('\n')}\n`;

it('--set: the plan first, --dry-run sends nothing, a second run finds every balance at its target', async () => {
  const emails = Array.from({ length: 12 }, (_, i) => `set${i}@example.org`);
  await seedMembers(cli, 'set-seed.csv', emails);
  // Six members hold a pass with 50 points already (earned through the API, as a till would).
  const earn = emails.slice(0, 6).map((e) => [e, 'card-points', 50] as const);
  await writeFile(path.join(cli.dir, 'earn.csv'), csv(earn));
  expect((await cli.run(['points', 'import', 'earn.csv'])).code).toBe(0);
  const before = await transactions('set%');
  expect(before).toBe(6);

  // 0-1: 50 → 120 and 50 → 10 (adjusted); 2: 50 → 50 (unchanged); 3-5: 50 → 0 (adjusted);
  // 6-9: no pass → 30 (created); 10: no pass, target 0 (unchanged, no pass issued); 11: absent.
  const targets = [120, 10, 50, 0, 0, 0, 30, 30, 30, 30, 0];
  await writeFile(path.join(cli.dir, 'set.csv'), csv(targets.map((t, i) => [emails[i] ?? '', 'card-points', t])));

  const dry = await cli.run(['points', 'import', 'set.csv', '--set', '--dry-run', '--json']);
  expect(dry.code, describeRun(dry)).toBe(0);
  expect(JSON.parse(dry.stdout)).toMatchObject({ created: 4, adjusted: 5, unchanged: 2, rejected: 0, dry_run: true });
  expect(await transactions('set%')).toBe(before);
  expect((await balances('set%')).size).toBe(6);

  const first = await cli.run(['points', 'import', 'set.csv', '--set', '--json']);
  expect(first.code, describeRun(first)).toBe(0);
  expect(first.stderr).toMatch(/Plan:\n\s+created\s+4\n\s+adjusted\s+5\n\s+unchanged\s+2\n\s+rejected\s+0/);
  expect(JSON.parse(first.stdout)).toMatchObject({ created: 4, adjusted: 5, unchanged: 2, rejected: 0 });
  const after = await balances('set%');
  targets.forEach((t, i) => {
    if (i !== 10) expect(after.get(emails[i] ?? ''), emails[i]).toBe(t);
  });
  expect(after.has(emails[10] ?? '')).toBe(false);
  const sent = await transactions('set%');
  expect(sent).toBe(before + 9);

  const second = await cli.run(['points', 'import', 'set.csv', '--set', '--json']);
  expect(second.code, describeRun(second)).toBe(0);
  expect(JSON.parse(second.stdout)).toMatchObject({ created: 0, adjusted: 0, unchanged: 11 });
  expect(await transactions('set%')).toBe(sent);
  expect(await balances('set%')).toEqual(after);
});

it('--add: a rerun of the same file credits nothing again; negative points are spent', async () => {
  const emails = Array.from({ length: 8 }, (_, i) => `add${i}@example.org`);
  await seedMembers(cli, 'add-seed.csv', emails);
  const rows = emails.map((e, i) => [e, 'card-points', 100 + i] as const);
  // A second line for member 0 credits again (its own line), a third spends 30.
  await writeFile(
    path.join(cli.dir, 'add.csv'),
    csv([...rows, [emails[0] ?? '', 'card-points', 5], [emails[0] ?? '', 'card-points', -30]]),
  );
  const first = await cli.run(['points', 'import', 'add.csv', '--json']);
  expect(first.code, describeRun(first)).toBe(0);
  expect(JSON.parse(first.stdout)).toMatchObject({ created: 8, adjusted: 2, unchanged: 0 });
  const credited = await balances('add%');
  expect(credited.get('add0@example.org')).toBe(100 + 5 - 30);
  expect(credited.get('add7@example.org')).toBe(107);
  expect(await transactions('add%')).toBe(10);

  const again = await cli.run(['points', 'import', 'add.csv', '--add', '--json']);
  expect(again.code, describeRun(again)).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, adjusted: 0, unchanged: 10 });
  expect(await balances('add%')).toEqual(credited);
  expect(await transactions('add%')).toBe(10);
});

it('--map: columns named otherwise (a German export with semicolons) are read; an unmapped file is refused, exit 2', async () => {
  const emails = ['map0@example.org', 'map1@example.org'];
  await seedMembers(cli, 'map-seed.csv', emails);
  await writeFile(
    path.join(cli.dir, 'export.csv'),
    `Kundennummer;Karte;Punktestand\n${emails[0]};card-points;40\n${emails[1]};card-points;75\n`,
  );
  const unmapped = await cli.run(['points', 'import', 'export.csv', '--set']);
  expect(unmapped.code, describeRun(unmapped)).toBe(2);
  expect(unmapped.stderr).toContain('--map member=<column>');
  expect(await transactions('map%')).toBe(0);

  const mapped = await cli.run([
    'points',
    'import',
    'export.csv',
    '--set',
    '--map',
    'member=Kundennummer',
    '--map',
    'storecard=Karte',
    '--map',
    'points=Punktestand',
    '--json',
  ]);
  expect(mapped.code, describeRun(mapped)).toBe(0);
  expect(JSON.parse(mapped.stdout)).toMatchObject({ created: 2, rejected: 0 });
  expect(await balances('map%')).toEqual(
    new Map([
      [emails[0], 40],
      [emails[1], 75],
    ]),
  );
});

it('rejects: bad rows, unknown members and another tenant’s member go to the rejects file, exit 3', async () => {
  await seedMembers(cli, 'rj-seed.csv', ['rj0@example.org', 'rj1@example.org']);
  await seedMembers(globex, 'gx-seed.csv', ['rj-globex@example.org']);
  const [gx] = await live.db.sql<{ id: string }[]>`SELECT id FROM members WHERE email = 'rj-globex@example.org'`;
  await writeFile(
    path.join(cli.dir, 'rj.csv'),
    csv([
      ['rj0@example.org', 'card-points', 40],
      ['not-an-email', 'card-points', 1],
      ['rj1@example.org', 'card-points', '1.5'],
      ['rj-globex@example.org', 'card-points', 10],
      [gx?.id ?? '', 'card-points', 10],
      ['rj1@example.org', 'card-points', -5],
      ['rj1@example.org', 'card-nope', 5],
    ]),
  );
  const run = await cli.run(['points', 'import', 'rj.csv', '--json']);
  expect(run.code, describeRun(run)).toBe(3);
  expect(JSON.parse(run.stdout)).toMatchObject({ created: 1, rejected: 6, rejects_file: 'rj.rejects.csv' });
  const rejects = (await readFile(path.join(cli.dir, 'rj.rejects.csv'), 'utf8')).trim().split('\n');
  expect(rejects[0]).toBe('email,storecard,points,error');
  expect(rejects.slice(1)).toEqual([
    expect.stringMatching(/^not-an-email,card-points,1,"line 3: ""not-an-email"" is neither an e-mail/),
    expect.stringMatching(/^rj1@example.org,card-points,1.5,"line 4: points must be a whole number/),
    expect.stringMatching(
      /^rj-globex@example.org,card-points,10,line 5: no member rj-globex@example.org in this brand$/,
    ),
    expect.stringMatching(new RegExp(`^${gx?.id},card-points,10,line 6: no member ${gx?.id} in this brand$`)),
    expect.stringMatching(/^rj1@example.org,card-points,-5,"?line 7: rejected by the API: insufficient_balance/),
    expect.stringMatching(/^rj1@example.org,card-nope,5,line 8: rejected by the API: not_found Storecard not found\.$/),
  ]);
  // The globex member was not touched: no pass in acme's storecard, no transaction.
  expect(await transactions('rj-globex%')).toBe(0);
  expect((await balances('rj%')).get('rj0@example.org')).toBe(40);
});

it('interrupted by SIGINT and resumed: every row is credited exactly once in total', async () => {
  const count = 600;
  const emails = Array.from({ length: count }, (_, i) => `rs${i}@example.org`);
  await seedMembers(cli, 'rs-seed.csv', emails);
  await writeFile(path.join(cli.dir, 'rs.csv'), csv(emails.map((e, i) => [e, 'card-points', 1 + (i % 97)])));
  const imports = path.join(cli.dir, 'config', 'loyalty', 'imports');
  const args = ['points', 'import', 'rs.csv', '--concurrency', '2'];
  const running = cli.spawn(args);
  // The first checkpoint: at least one batch of 200 rows answered.
  await until(async () => existsSync(imports) && (await readdir(imports)).some((f) => f.endsWith('.json')), 60_000);
  running.child.kill('SIGINT');
  const stopped = await running.exited;
  expect(stopped.code, describeRun(stopped)).toBe(130);
  expect(stopped.stderr).toContain(`Continue with: loyalty ${args.join(' ')} --resume`);
  const between = await transactions('rs%');
  expect(between).toBeGreaterThanOrEqual(200);
  expect(between).toBeLessThan(count);

  const refused = await cli.run(args);
  expect(refused.code, describeRun(refused)).toBe(1);
  expect(refused.stderr).toContain('--resume');

  const resumed = await cli.run([...args, '--resume', '--json']);
  expect(resumed.code, describeRun(resumed)).toBe(0);
  const summary = JSON.parse(resumed.stdout);
  expect(summary.resumed_batches).toBeGreaterThanOrEqual(1);
  expect(summary.created + summary.adjusted + summary.unchanged).toBe(count);
  expect(await transactions('rs%')).toBe(count);
  const after = await balances('rs%');
  emails.forEach((e, i) => {
    expect(after.get(e), e).toBe(1 + (i % 97));
  });
}, 120_000);
