// End to end: tag members from a file and issue them a coupon with `--wait`, through the built
// `loyalty` binary against the real server (its graphile-worker runs the voucher job).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const MEMBERS = 300;

let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer();
  cli = await cliSandbox(live.url);
  // The VIPs, and someone of the brand who is not put on the tag and must not get a voucher.
  const jsonl = [
    ...Array.from({ length: MEMBERS }, (_, i) => ({ email: `vip${i + 1}@example.org`, first_name: `Vip${i + 1}` })),
    { email: 'outsider@example.org' },
  ];
  const imported = await cli.run(['members', 'import', '-', '--format', 'jsonl'], {
    input: `${jsonl.map((m) => JSON.stringify(m)).join('\n')}\n`,
  });
  expect(imported.code, describeRun(imported)).toBe(0);
  expect(imported.stdout).toMatch(new RegExp(`^\\s+new\\s+${MEMBERS + 1}$`, 'm'));
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

const couponPasses = async (coupon: string) =>
  (
    await live.db.sql`
    SELECT count(*)::int AS passes, count(DISTINCT p.member_id)::int AS members,
           count(*) FILTER (WHERE m.email NOT LIKE 'vip%')::int AS outside_tag
    FROM passes p JOIN members m ON m.id = p.member_id WHERE p.coupon_id = ${coupon}`
  )[0];

type Job = {
  job_id: string;
  status: string;
  total: number;
  processed: number;
  issued: number;
  skipped: number;
  failed: number;
};

it('tags members from a file (e-mails in any case and UUIDs) and issues the coupon to each of them once', async () => {
  const created = await cli.run(['tags', 'create', 'VIP customers', '--ref', 'vip']);
  expect(created.code, describeRun(created)).toBe(0);
  const [tag] = await live.db.sql`SELECT id FROM tags WHERE external_reference = 'vip' AND brand_id = 'brand-acme'`;
  expect(created.stdout.trim()).toBe(tag!.id);

  // Half by e-mail (some upper case), half by UUID; a blank line and a repeat are harmless.
  const ids = await live.db.sql<
    Array<{ id: string; email: string }>
  >`SELECT id, email FROM members WHERE email LIKE 'vip%' ORDER BY email`;
  expect(ids).toHaveLength(MEMBERS);
  const lines = ids.map((m, i) => (i % 2 === 0 ? m.id : i % 3 === 0 ? m.email.toUpperCase() : m.email));
  await writeFile(path.join(cli.dir, 'vip-members.txt'), `${[...lines, '', lines[1]].join('\n')}\n`);
  const added = await cli.run(['tags', 'add-members', 'vip', '--file', 'vip-members.txt']);
  expect(added.code, describeRun(added)).toBe(0);
  expect(added.stdout).toContain(`Added ${MEMBERS} members to vip`);
  const [onTag] = await live.db.sql`SELECT count(*)::int AS n FROM tag_members WHERE tag_id = ${tag!.id}`;
  expect(onTag!.n).toBe(MEMBERS);

  const issued = await cli.run(['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-welcome', '--wait', '--json']);
  expect(issued.code, describeRun(issued)).toBe(0);
  const job = JSON.parse(issued.stdout) as Job;
  expect(job).toMatchObject({
    status: 'done',
    total: MEMBERS,
    processed: MEMBERS,
    issued: MEMBERS,
    skipped: 0,
    failed: 0,
  });
  expect(issued.stderr).toContain(`Queued voucher job ${job.job_id} for tag vip.`);
  expect(issued.stderr).not.toContain('\u001b['); // CI: plain lines, no live view
  expect(await couponPasses('coupon-welcome')).toEqual({ passes: MEMBERS, members: MEMBERS, outside_tag: 0 });
  const [row] = await live.db.sql`SELECT status, issued FROM voucher_jobs WHERE id = ${job.job_id}`;
  expect(row).toMatchObject({ status: 'done', issued: MEMBERS });

  // Issuing again skips everyone: the final line says so, and no pass is added.
  const again = await cli.run(['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-welcome', '--wait']);
  expect(again.code, describeRun(again)).toBe(0);
  const last = again.stdout.trim().split('\n').at(-1);
  expect(last).toMatch(
    new RegExp(`^job [0-9a-f-]{36} done: ${MEMBERS} of ${MEMBERS} members, issued 0, skipped ${MEMBERS}, failed 0$`),
  );
  expect(last).not.toContain(job.job_id);
  expect(await couponPasses('coupon-welcome')).toEqual({ passes: MEMBERS, members: MEMBERS, outside_tag: 0 });
});

it('a job for an inactive coupon ends failed and exits non-zero', async () => {
  const result = await cli.run(['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-retired', '--wait', '--json']);
  expect(result.code, describeRun(result)).toBe(1);
  const job = JSON.parse(result.stdout) as Job;
  expect(job).toMatchObject({ status: 'failed', issued: 0 });
  expect(result.stderr).toContain(`Voucher job ${job.job_id} failed`);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  const [row] = await live.db.sql`SELECT status FROM voucher_jobs WHERE id = ${job.job_id}`;
  expect(row!.status).toBe('failed');
  expect((await couponPasses('coupon-retired'))!.passes).toBe(0);
});
