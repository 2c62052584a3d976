// End to end: the built `loyalty members import --update` against the real server. Members exist;
// a file renames some of them and adds others: --dry-run counts, --update applies through
// PUT /bulk/members, a second run updates none, and an update interrupted by SIGINT is resumed.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const BRAND = 'brand-e2e-update';
let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer({}, { worker: false });
  cli = await cliSandbox(live.url, { LOYALTY_BRAND: BRAND });
  await live.db.sql`INSERT INTO brands (id, organization_id, name) VALUES (${BRAND}, 'org-acme', 'E2E update')`;
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

const csv = (rows: Array<[email: string, first: string, last: string]>): string =>
  `${['email,first_name,last_name', ...rows.map((row) => row.join(','))].join('\n')}\n`;

/** first_name last_name of each member whose e-mail is like `pattern`, by e-mail. */
async function names(pattern: string): Promise<Map<string, string>> {
  const rows = await live.db.sql<{ email: string; first_name: string | null; last_name: string | null }[]>`
    SELECT m.email, m.first_name, m.last_name FROM members m JOIN brand_members bm ON bm.member_id = m.id
    WHERE bm.brand_id = ${BRAND} AND m.email LIKE ${pattern}`;
  return new Map(rows.map((r) => [r.email, `${r.first_name ?? ''} ${r.last_name ?? ''}`]));
}

it('--dry-run counts created, updated and unchanged; --update applies them; a second run updates none', async () => {
  const existing = Array.from({ length: 20 }, (_, i): [string, string, string] => [
    `up${i}@example.org`,
    `First${i}`,
    `Last${i}`,
  ]);
  await writeFile(path.join(cli.dir, 'seed.csv'), csv(existing));
  const seeded = await cli.run(['members', 'import', 'seed.csv']);
  expect(seeded.code, describeRun(seeded)).toBe(0);

  // Six renamed (first, last or both), fourteen as they are, five new.
  const changed = existing.map(([email, first, last], i): [string, string, string] =>
    i % 3 === 0 && i < 18 ? [email, i % 2 ? `New${first}` : first, i % 2 ? last : `New${last}`] : [email, first, last],
  );
  const fresh = Array.from({ length: 5 }, (_, i): [string, string, string] => [`upnew${i}@example.org`, 'N', `${i}`]);
  await writeFile(path.join(cli.dir, 'update.csv'), csv([...changed, ...fresh]));
  const before = await names('up%');

  const dry = await cli.run(['members', 'import', 'update.csv', '--update', '--dry-run']);
  expect(dry.code, describeRun(dry)).toBe(0);
  expect(dry.stdout).toMatch(/created\s+5\n\s+updated\s+6\n\s+unchanged\s+14\n/);
  expect(await names('up%')).toEqual(before);

  const applied = await cli.run(['members', 'import', 'update.csv', '--update', '--json']);
  expect(applied.code, describeRun(applied)).toBe(0);
  expect(JSON.parse(applied.stdout)).toMatchObject({ new: 5, found: 20, updated: 6 });
  const after = await names('up%');
  for (const [email, first, last] of [...changed, ...fresh]) expect(after.get(email)).toBe(`${first} ${last}`);

  const again = await cli.run(['members', 'import', 'update.csv', '--update']);
  expect(again.code, describeRun(again)).toBe(0);
  expect(again.stdout).toMatch(/\n\s+updated\s+0\n/);
  const dryAgain = await cli.run(['members', 'import', 'update.csv', '--update', '--dry-run', '--json']);
  expect(JSON.parse(dryAgain.stdout)).toMatchObject({ created: 0, updated: 0, unchanged: 25 });
});

it('an update interrupted by SIGINT keeps its checkpoint; --update --resume finishes it', async () => {
  const members = Array.from({ length: 150 }, (_, i): [string, string, string] => [
    `rs${i}@example.org`,
    'Old',
    `${i}`,
  ]);
  await writeFile(path.join(cli.dir, 'rs-seed.csv'), csv(members));
  expect((await cli.run(['members', 'import', 'rs-seed.csv'])).code).toBe(0);
  const renamed = members.map(([email, , last]): [string, string, string] => [email, 'Renamed', last]);
  await writeFile(path.join(cli.dir, 'rs.csv'), csv(renamed));

  const args = ['members', 'import', 'rs.csv', '--update', '--batch-size', '1', '--concurrency', '1'];
  const running = cli.spawn(args, { timeoutMs: 110_000 });
  // The sign-up pass comes first, one row a request: 20 s and more at CI's load (7 rows/s seen).
  await running.waitFor(/Updating the names of 150 existing members/, { timeoutMs: 90_000 });
  running.child.kill('SIGINT');
  const stopped = await running.exited;
  expect(stopped.code, describeRun(stopped)).toBe(130);
  expect(stopped.stderr).toContain(`Continue with: loyalty ${args.join(' ')} --resume`);
  const between = [...(await names('rs%')).values()].filter((n) => n.startsWith('Renamed')).length;
  expect(between).toBeLessThan(150);

  const resumed = await cli.run([...args, '--resume', '--json']);
  expect(resumed.code, describeRun(resumed)).toBe(0);
  expect(JSON.parse(resumed.stdout)).toMatchObject({ resumed_batches: 150 });
  expect([...(await names('rs%')).values()].every((n) => n.startsWith('Renamed '))).toBe(true);
  const last = await cli.run(['members', 'import', 'rs.csv', '--update', '--dry-run', '--json']);
  expect(JSON.parse(last.stdout)).toMatchObject({ updated: 0, unchanged: 150 });
}, 240_000);
