// End to end: `loyalty webhooks listen` (the built binary) against the real server's event feed:
// events of one type to their own receiver and the rest to the catch-all, a receiver that fails
// twice getting the event on attempt 3 without holding up the other, and `--resume` forwarding the
// events that happened while it was stopped, exactly once.
import { rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { constructEvent } from '@loyalty/sdk/webhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { closedPortUrl } from '#test-helpers/closed-port.js';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

type Received = { id: string; type: string; headers: IncomingHttpHeaders; body: string; at: number };

/** A receiver on 127.0.0.1; `answer(event id, how often it came)` gives each status. */
async function receiver(answer: (id: string, times: number) => number = () => 204) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const { id, type } = JSON.parse(body) as { id: string; type: string };
      received.push({ id, type, headers: req.headers, body, at: Date.now() });
      res.writeHead(answer(id, received.filter((r) => r.id === id).length)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const until = async (done: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 30_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within 30 s; got ${JSON.stringify(received)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    until,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let live: LiveServer;
let cli: CliSandbox;
let token: string;

beforeAll(async () => {
  live = await startLiveServer();
  cli = await cliSandbox(live.url);
  token = await fetchToken(live.url, 'acme-admin');
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

async function post(pathname: string, body: unknown): Promise<void> {
  const res = await fetch(`${live.url}${pathname}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  await res.body?.cancel();
}

/** Creates a member (member.created) and answers its id. */
async function createMember(email: string): Promise<string> {
  await post('/members', { brand_id: 'brand-acme', email, first_name: 'Listen' });
  const [row] = await live.db.sql`SELECT id::text FROM members WHERE lower(email) = ${email}`;
  return row!.id as string;
}

/** The ids of the events about a member, in feed order. */
async function eventsOf(memberId: string): Promise<Array<{ id: string; type: string }>> {
  const rows = await live.db.sql`
    SELECT id::text, type FROM events WHERE data->>'member_id' = ${memberId} ORDER BY txid, seq`;
  return rows.map((row) => ({ id: row.id as string, type: row.type as string }));
}

const secret = async (): Promise<string> => {
  const printed = await cli.run(['webhooks', 'listen', '--print-secret']);
  expect(printed.code, describeRun(printed)).toBe(0);
  return printed.stdout.trim();
};

it('routes coupon.issued to its own receiver and the rest to --forward-to; a receiver failing twice gets the event on attempt 3 without holding up the other', async () => {
  const coupons = await receiver();
  const others = await receiver((_, times) => (times <= 2 ? 503 : 204));
  const listener = cli.spawn(
    ['webhooks', 'listen', '--forward', `coupon.issued=${coupons.url}`, '--forward-to', others.url, '--wait', '2'],
    { timeoutMs: 90_000 },
  );
  try {
    await listener.waitFor(
      /Listening for all events on .*, forwarding coupon\.issued to \S+, everything else to \S+\./,
    );
    const memberId = await createMember('routed@example.org');
    await post(`/members/${memberId}/passes`, { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    const events = await eventsOf(memberId);
    expect(events.map((e) => e.type)).toEqual(['member.created', 'coupon.issued']);
    const created = events[0]!;
    const issued = events[1]!;

    await others.until(() => others.received.length === 3, 'three attempts at the catch-all');
    await coupons.until(() => coupons.received.length === 1, 'the coupon.issued forward');
    await listener.waitFor(new RegExp(`→ 204 POST ${others.url} \\[\\d+ ms\\] attempt 3/6 · ${created.id}`));

    expect(coupons.received.map((r) => r.id)).toEqual([issued.id]);
    expect(others.received.map((r) => [r.id, r.headers['loyalty-attempt']])).toEqual([
      [created.id, '1'],
      [created.id, '2'],
      [created.id, '3'],
    ]);
    // Same message id and body on every attempt, each signed with the local secret.
    const key = await secret();
    expect(new Set(others.received.map((r) => r.body)).size).toBe(1);
    for (const r of [...others.received, ...coupons.received]) {
      expect(r.headers['webhook-id']).toBe(r.id);
      expect(constructEvent(r.body, r.headers as Record<string, string>, key).id).toBe(r.id);
    }
    // The other receiver had its event while the catch-all was still retrying.
    expect(coupons.received[0]!.at).toBeLessThan(others.received[2]!.at);
    expect(listener.stderr).toMatch(
      new RegExp(`→ ✖ 503 POST ${others.url} \\[\\d+ ms\\] attempt 1/6 · ${created.id}; retrying in \\d s`),
    );
    expect(listener.stderr).toMatch(new RegExp(`→ 204 POST ${coupons.url} \\[\\d+ ms\\] attempt 1/6 · ${issued.id}`));
  } finally {
    listener.child.kill('SIGINT');
    await coupons.close();
    await others.close();
  }
  const stopped = await listener.exited;
  expect(stopped.code, describeRun(stopped)).toBe(130);
  expect(stopped.stderr).not.toMatch(/^\s+at /m);
});

it('--resume forwards the events that happened while listen was stopped, exactly once', async () => {
  const target = await receiver();
  const args = ['webhooks', 'listen', '--forward-to', target.url, '--resume', '--wait', '2'];
  try {
    const first = cli.spawn(args, { timeoutMs: 60_000 });
    await first.waitFor(/No resume point yet for profile default: starting from now\./);
    const before = await createMember('resume-1@example.org');
    await target.until(() => target.received.length === 1, 'the first forward');
    await first.waitFor(/→ 204 POST \S+ \[\d+ ms\] attempt 1\/6/);
    first.child.kill('SIGINT');
    const stopped = await first.exited;
    expect(stopped.code, describeRun(stopped)).toBe(130);
    expect(stopped.stderr).toContain('Resume point saved: `--resume` continues from here.');
    const state = path.join(cli.env.XDG_CONFIG_HOME!, 'loyalty', 'listen-state.json');
    expect((await stat(state)).mode & 0o777).toBe(0o600);

    // While stopped: two members, one of them with a coupon.
    const second = await createMember('resume-2@example.org');
    await post(`/members/${second}/passes`, { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    const third = await createMember('resume-3@example.org');

    const resumed = cli.spawn(args, { timeoutMs: 60_000 });
    await resumed.waitFor(/Resuming from the point saved \S+\./);
    await target.until(() => target.received.length === 4, 'the three events of the stop');
    const fourth = await createMember('resume-4@example.org');
    await target.until(() => target.received.length === 5, 'an event after the resume');
    // Nothing more comes: no event is forwarded twice.
    await resumed.waitFor(new RegExp(`→ 204 POST \\S+ \\[\\d+ ms\\] attempt 1/6 · ${(await eventsOf(fourth))[0]!.id}`));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    resumed.child.kill('SIGINT');
    const ended = await resumed.exited;
    expect(ended.code, describeRun(ended)).toBe(130);

    const expected = [
      ...(await eventsOf(before)),
      ...(await eventsOf(second)),
      ...(await eventsOf(third)),
      ...(await eventsOf(fourth)),
    ];
    expect(expected.map((e) => e.type)).toEqual([
      'member.created',
      'member.created',
      'coupon.issued',
      'member.created',
      'member.created',
    ]);
    expect(target.received.map((r) => r.id)).toEqual(expected.map((e) => e.id));
    expect(ended.stdout).not.toContain(expected[0]!.id);
  } finally {
    await target.close();
  }
});

it('Ctrl-C with a backlog of an import says in one line how many events were not forwarded, and --resume forwards them', async () => {
  const rows = 300;
  // No resume point from the test above: this run, without --resume, saves its own.
  await rm(path.join(cli.env.XDG_CONFIG_HOME!, 'loyalty', 'listen-state.json'), { force: true });
  await writeFile(
    path.join(cli.dir, 'backlog.csv'),
    `email\n${Array.from({ length: rows }, (_, i) => `backlog-${i + 1}@example.org`).join('\n')}\n`,
  );
  const down = `${await closedPortUrl()}/hooks`; // a receiver that is not running: every forward waits to retry
  const listener = cli.spawn(['webhooks', 'listen', '--forward-to', down, '--wait', '2'], { timeoutMs: 90_000 });
  let printed: string[] = [];
  try {
    await listener.waitFor(/Listening for all events on /);
    const imported = await cli.run(['members', 'import', 'backlog.csv']);
    expect(imported.code, describeRun(imported)).toBe(0);
    const count = () => listener.stdout.match(/member\.created/g)?.length ?? 0;
    const deadline = Date.now() + 60_000;
    while (count() < rows && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    printed = [...listener.stdout.matchAll(/member\.created\s+(\S+)/g)].map((m) => m[1]!);
    expect(printed).toHaveLength(rows);
  } finally {
    listener.child.kill('SIGINT');
  }
  const stopped = await listener.exited;
  expect(stopped.code, describeRun(stopped)).toBe(130);
  const lines = stopped.stderr.split('\n').filter((line) => /not forwarded|abandoned/.test(line));
  expect(lines, describeRun(stopped)).toEqual([`! ${rows} events not forwarded; rerun with --resume to receive them.`]);

  const target = await receiver();
  try {
    const resumed = cli.spawn(['webhooks', 'listen', '--forward-to', target.url, '--resume', '--wait', '2'], {
      timeoutMs: 90_000,
    });
    await resumed.waitFor(
      new RegExp(`Resuming from the point saved \\S+ \\(${rows} not acknowledged then: forwarded again\\)\\.`),
    );
    await target.until(() => target.received.length >= rows, `the ${rows} events of the backlog`);
    resumed.child.kill('SIGINT');
    const ended = await resumed.exited;
    expect(ended.code, describeRun(ended)).toBe(130);
    expect(target.received.map((r) => r.id)).toEqual(printed);
  } finally {
    await target.close();
  }
});
