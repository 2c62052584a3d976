import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { constructEvent } from '@loyalty/sdk/webhooks';
import { http, HttpResponse, delay } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { stateFileOf } from './listen-resume.js';
import { readHeaderLines, RecentIds } from './listen.js';

// The forwarded deliveries go to a real local receiver: let them through.
const server = fakeApiServer({ onUnhandledRequest: 'bypass' });

const event = (id: string, type = 'member.created') => ({
  id,
  type,
  created_at: '2026-11-21T10:15:30.000Z',
  organization_id: 'org-acme',
  data: { member_id: 'm-1', brand_id: 'brand-acme' },
});

/** A local receiver; `answer` gives the status for each request (by event id and how often it came). */
async function receiver(answer: (id: string, times: number) => number = () => 204) {
  const received: Array<{ headers: IncomingMessage['headers']; body: string; id: string }> = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = (JSON.parse(body) as { id: string }).id;
      received.push({ headers: req.headers, body, id });
      res.writeHead(answer(id, received.filter((r) => r.id === id).length)).end();
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hooks`, received, close: () => srv.close() };
}

describe('loyalty webhooks listen', { timeout: 20_000 }, () => {
  it('starts at "now", forwards new events signed with the local secret, and survives a dropped connection', async () => {
    const home = await tempConfigHome();
    const env = loggedInEnv(home);
    const secret = (await runCli(['webhooks', 'listen', '--print-secret'], { env })).stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect((await runCli(['webhooks', 'listen', '--print-secret'], { env })).stdout.trim()).toBe(secret);

    const target = await receiver();
    const controller = new AbortController();
    const queries: string[] = [];
    let calls = 0;
    server.use(
      http.get(`${API}/events`, async ({ request }) => {
        const url = new URL(request.url);
        queries.push(url.search);
        calls += 1;
        if (!url.searchParams.has('after'))
          return HttpResponse.json({ message: 'ok', data: [event('old')], next_cursor: '1' });
        if (calls === 2) return HttpResponse.error();
        if (calls === 3)
          return HttpResponse.json({
            message: 'ok',
            data: [event('e-2'), event('e-3', 'coupon.issued')],
            next_cursor: '3',
          });
        // The same event again (at-least-once): delivered only once.
        if (calls === 4)
          return HttpResponse.json({ message: 'ok', data: [event('e-3', 'coupon.issued')], next_cursor: '3' });
        await delay(50);
        return HttpResponse.json({ message: 'ok', data: [], next_cursor: '3' });
      }),
    );
    const watcher = setInterval(() => {
      if (target.received.length === 2 && calls >= 5) controller.abort();
    }, 20);
    const result = await runCli(
      ['webhooks', 'listen', '--forward-to', target.url, '--events', 'member.created,coupon.issued'],
      { env, signal: controller.signal },
    );
    clearInterval(watcher);
    target.close();

    expect(result.code).toBe(130);
    expect(result.stdout).not.toContain('old');
    expect(result.stdout).toMatch(/member\.created\s+e-2\s+member_id=m-1 brand_id=brand-acme/);
    expect(result.stdout).toMatch(/coupon\.issued\s+e-3/);
    expect(result.stderr).toContain(`Signing secret for ${target.url}: ${secret}`);
    expect(result.stderr).toMatch(/✖ Connection to the event feed lost: Cannot reach the API/);
    expect(result.stderr).toMatch(/Reconnecting in \d s \(attempt 1\)/);
    expect(result.stderr).toContain(
      'Reconnected to http://api.test; resuming from where the feed stopped (no events missed).',
    );
    expect(result.stderr).toContain(`→ 204 POST ${target.url}`);
    expect(queries[0]).toContain('types=member.created%2Ccoupon.issued');
    expect(queries[2]).toContain('after=1');
    const delivered = target.received.map((r) => constructEvent(r.body, r.headers as Record<string, string>, secret));
    expect(delivered.map((e) => e.id)).toEqual(['e-2', 'e-3']);
    expect(result.stdout.match(/e-3/g)).toHaveLength(1);
    expect(target.received[0]!.headers['loyalty-event']).toBe('member.created');
  }, 15_000);

  it('says loudly when the receiver is down and keeps listening', async () => {
    const controller = new AbortController();
    let calls = 0;
    server.use(
      http.get(`${API}/events`, async () => {
        calls += 1;
        if (calls === 1) return HttpResponse.json({ message: 'ok', data: [], next_cursor: '0' });
        if (calls === 2) return HttpResponse.json({ message: 'ok', data: [event('e-1')], next_cursor: '1' });
        controller.abort();
        return HttpResponse.json({ message: 'ok', data: [], next_cursor: '1' });
      }),
    );
    const closed = await receiver();
    closed.close();
    const result = await runCli(['webhooks', 'listen', '--forward-to', closed.url], {
      env: loggedInEnv(await tempConfigHome()),
      signal: controller.signal,
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(`→ ✖ ECONNREFUSED POST ${closed.url}`);
    expect(result.stderr).toContain('is the receiver running?');
  });

  it('stops on a permission error instead of reconnecting', async () => {
    server.use(
      http.get(`${API}/events`, () =>
        HttpResponse.json({ message: 'This action is unauthorized.', error: 'forbidden' }, { status: 403 }),
      ),
    );
    const result = await runCli(['webhooks', 'listen'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(4);
  });
});

describe('RecentIds', () => {
  it('says whether an id is new, remembering a bounded number', () => {
    const ids = new RecentIds(2);
    expect([ids.add('a'), ids.add('a'), ids.add('b'), ids.add('c'), ids.add('a')]).toEqual([
      true,
      false,
      true,
      true,
      true,
    ]);
  });
});

type Sent = ReturnType<typeof event>;

/** The event feed as the server pages it; here the cursor is the number of events before it. */
function feed() {
  const events: Sent[] = [];
  let polls = 0;
  server.use(
    http.get(`${API}/events`, async ({ request }) => {
      polls += 1;
      const url = new URL(request.url);
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const after = url.searchParams.get('after');
      if (after === null)
        return HttpResponse.json({ message: 'ok', data: events.slice(-limit), next_cursor: String(events.length) });
      const data = events.slice(Number(after), Number(after) + limit);
      if (!data.length) await delay(30);
      return HttpResponse.json({ message: 'ok', data, next_cursor: String(Number(after) + data.length) });
    }),
  );
  return { events, polls: () => polls };
}

/** Runs `loyalty …` until `done()` holds (checked every 20 ms), then presses Ctrl-C. */
async function runUntil(args: string[], env: NodeJS.ProcessEnv, done: () => boolean) {
  const controller = new AbortController();
  const watcher = setInterval(() => {
    if (done()) controller.abort();
  }, 20);
  try {
    return await runCli(args, { env, signal: controller.signal });
  } finally {
    clearInterval(watcher);
  }
}

describe('loyalty webhooks listen: forwarding', { timeout: 20_000 }, () => {
  it('sends each type to its --forward URL and the rest to --forward-to, with --headers and --headers-file, reporting each outcome in --json', async () => {
    const home = await tempConfigHome();
    const env = loggedInEnv(home);
    const headersFile = join(home, 'receiver-headers');
    await writeFile(headersFile, '# the receiver wants a token\n\nAuthorization: Bearer s3cret-token\n', {
      mode: 0o600,
    });
    const coupons = await receiver();
    const others = await receiver();
    const f = feed();
    const result = await runUntil(
      [
        'webhooks',
        'listen',
        '--forward',
        `coupon.issued=${coupons.url}`,
        '--forward-to',
        others.url,
        '--headers',
        'X-Env: dev, X-Team: loyalty',
        '--headers-file',
        headersFile,
        '--json',
      ],
      env,
      () => {
        if (f.polls() >= 1 && !f.events.length)
          f.events.push(event('e-1'), event('e-2', 'coupon.issued'), event('e-3', 'points.changed'));
        return coupons.received.length + others.received.length === 3;
      },
    );
    coupons.close();
    others.close();
    expect(result.code).toBe(130);
    expect(coupons.received.map((r) => r.id)).toEqual(['e-2']);
    expect(others.received.map((r) => r.id)).toEqual(['e-1', 'e-3']);
    const secret = (await runCli(['webhooks', 'listen', '--print-secret'], { env })).stdout.trim();
    for (const { headers, body } of [...coupons.received, ...others.received]) {
      expect([headers['x-env'], headers['x-team'], headers.authorization]).toEqual([
        'dev',
        'loyalty',
        'Bearer s3cret-token',
      ]);
      expect(constructEvent(body, headers as Record<string, string>, secret).id).toMatch(/^e-/);
    }
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id?: string; forward?: Record<string, unknown> });
    expect(lines.filter((line) => line.id).map((line) => line.id)).toEqual(['e-1', 'e-2', 'e-3']);
    const outcomes = lines.flatMap((line) => (line.forward ? [line.forward] : []));
    expect(outcomes).toHaveLength(3);
    expect(outcomes.find((o) => o.event_id === 'e-2')).toMatchObject({
      event_type: 'coupon.issued',
      url: coupons.url,
      outcome: 'delivered',
      attempt: 1,
      attempts: 6,
      status: 204,
      ms: expect.any(Number),
    });
    expect(result.stderr).toContain(
      `forwarding coupon.issued to ${coupons.url}, everything else to ${others.url}. Ctrl-C to stop.`,
    );
  });

  it('--jq filters each JSON line of the stream (events and forward outcomes alike)', async () => {
    const target = await receiver();
    const f = feed();
    const result = await runUntil(
      [
        'webhooks',
        'listen',
        '--forward-to',
        target.url,
        '--jq',
        '.type // "\\(.forward.event_id) \\(.forward.outcome)"',
      ],
      loggedInEnv(await tempConfigHome()),
      () => {
        if (f.polls() >= 1 && !f.events.length) f.events.push(event('e-1'), event('e-2', 'coupon.issued'));
        return target.received.length === 2;
      },
    );
    target.close();
    expect(result.code).toBe(130);
    expect(result.stdout.trimEnd().split('\n').sort()).toEqual([
      'coupon.issued',
      'e-1 delivered',
      'e-2 delivered',
      'member.created',
    ]);
  });

  it('retries a forward that failed and prints every attempt', async () => {
    const target = await receiver((_, times) => (times === 1 ? 503 : 204));
    const f = feed();
    const result = await runUntil(
      ['webhooks', 'listen', '--forward-to', target.url, '--forward-retries', '2'],
      loggedInEnv(await tempConfigHome()),
      () => {
        if (f.polls() >= 1 && !f.events.length) f.events.push(event('e-1'));
        return target.received.length === 2;
      },
    );
    target.close();
    expect(result.stderr).toMatch(
      new RegExp(`→ ✖ 503 POST ${target.url} \\[\\d+ ms\\] attempt 1/3 · e-1; retrying in 1 s`),
    );
    expect(result.stderr).toMatch(new RegExp(`→ 204 POST ${target.url} \\[\\d+ ms\\] attempt 2/3 · e-1`));
    expect(target.received.map((r) => r.headers['loyalty-attempt'])).toEqual(['1', '2']);
  });

  it('--resume forwards what happened while stopped exactly once, and an event that ran out of retries again', async () => {
    const home = await tempConfigHome();
    const env = loggedInEnv(home);
    const f = feed();
    f.events.push(event('e-0'));

    const first = await receiver();
    const run1 = await runUntil(['webhooks', 'listen', '--forward-to', first.url, '--resume'], env, () => {
      if (f.polls() >= 1 && f.events.length === 1) f.events.push(event('e-1'), event('e-2'));
      return first.received.length === 2;
    });
    first.close();
    expect(first.received.map((r) => r.id)).toEqual(['e-1', 'e-2']);
    expect(run1.stderr).toContain('No resume point yet for profile default: starting from now.');
    expect(run1.stderr).toContain('Resume point saved: `--resume` continues from here.');
    expect((await stat(stateFileOf(join(home, 'loyalty')))).mode & 0o777).toBe(0o600);

    // While stopped.
    f.events.push(event('e-3'), event('e-4', 'coupon.issued'));
    const second = await receiver((id) => (id === 'e-4' ? 500 : 204));
    const run2 = await runUntil(
      ['webhooks', 'listen', '--forward-to', second.url, '--resume', '--forward-retries', '0'],
      env,
      () => second.received.length === 2,
    );
    second.close();
    expect(second.received.map((r) => r.id)).toEqual(['e-3', 'e-4']);
    expect(run2.stdout).not.toMatch(/e-[012]/);
    expect(run2.stderr).toContain('gave up after 1 attempt, --resume forwards it again');
    expect(run2.stderr).toContain('1 event not forwarded; rerun with --resume to receive them.');

    f.events.push(event('e-5'));
    const third = await receiver();
    const run3 = await runUntil(
      ['webhooks', 'listen', '--forward-to', third.url, '--resume'],
      env,
      () => third.received.length === 2,
    );
    third.close();
    expect(run3.stderr).toContain('(1 not acknowledged then: forwarded again)');
    expect(third.received.map((r) => r.id)).toEqual(['e-4', 'e-5']);
    expect(run3.stdout).not.toContain('e-3');
    expect(run3.stderr).toContain('Resume point saved: `--resume` continues from here.');
  });

  it('Ctrl-C abandons a forward that gets no answer within the grace period and saves it as not acknowledged', async () => {
    const home = await tempConfigHome();
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`;
    let arrived = false;
    hanging.on('request', () => {
      arrived = true;
    });
    const f = feed();
    let pressed = 0;
    const result = await runUntil(['webhooks', 'listen', '--forward-to', url, '--resume'], loggedInEnv(home), () => {
      if (f.polls() >= 1 && !f.events.length) f.events.push(event('e-1'));
      if (arrived && !pressed) pressed = Date.now();
      return arrived;
    });
    const took = Date.now() - pressed;
    hanging.closeAllConnections();
    hanging.close();
    expect(result.code).toBe(130);
    expect(took).toBeGreaterThanOrEqual(4000);
    expect(took).toBeLessThan(8000);
    expect(result.stderr).toContain('Finishing the forward in flight (at most 5 s)…');
    expect(result.stderr).not.toContain('abandoned');
    expect(result.stderr).toContain('! 1 event not forwarded; rerun with --resume to receive them.\n');
    const state = JSON.parse(await readFile(stateFileOf(join(home, 'loyalty')), 'utf8')) as {
      listen: Record<string, { cursor: string; unsettled: Array<{ id: string }> }>;
    };
    expect(Object.values(state.listen)).toEqual([
      expect.objectContaining({ cursor: '0', unsettled: [expect.objectContaining({ id: 'e-1', url })] }),
    ]);
  });

  it('Ctrl-C with a backlog, without --resume: one line for all of them, and --resume forwards them', async () => {
    const home = await tempConfigHome();
    const env = loggedInEnv(home);
    const f = feed();
    const down = await receiver();
    down.close(); // connection refused: each forward waits to retry
    const backlog = Array.from({ length: 120 }, (_, i) => event(`b-${i + 1}`));
    const run1 = await runUntil(['webhooks', 'listen', '--forward-to', down.url], env, () => {
      if (f.polls() >= 1 && !f.events.length) f.events.push(...backlog);
      return f.polls() >= 4;
    });
    expect(run1.code).toBe(130);
    expect(run1.stdout.match(/b-\d+/g)).toHaveLength(120);
    const summary = run1.stderr.split('\n').filter((line) => /not forwarded|abandoned/.test(line));
    expect(summary).toEqual(['! 120 events not forwarded; rerun with --resume to receive them.']);

    const up = await receiver();
    const run2 = await runUntil(
      ['webhooks', 'listen', '--forward-to', up.url, '--resume'],
      env,
      () => up.received.length === 120,
    );
    up.close();
    expect(run2.stderr).toContain('(120 not acknowledged then: forwarded again)');
    expect(up.received.map((r) => r.id)).toEqual(backlog.map((e) => e.id));
    expect(run2.stderr).toContain('Resume point saved: `--resume` continues from here.');
  });

  it.each([
    [['--forward', 'coupon.isued=http://localhost:1/x'], '--forward: unknown event type "coupon.isued"'],
    [['--forward', 'coupon.issued'], '--forward takes <event-type>=<url>'],
    [['--forward-to', 'http://localhost/x', '--headers', 'webhook-signature: v1,x'], '--headers cannot set'],
    [['--resume'], '--resume remembers what was forwarded: add --forward-to or --forward.'],
    [['--forward-to', 'http://localhost/x', '--resume', '--replay', '3'], '--resume and --replay cannot be combined'],
    [['--forward-to', 'http://localhost/x', '--forward-retries', 'lots'], '--forward-retries must be a whole number'],
  ])('refuses %j with a usage error naming the option', async (args, message) => {
    const result = await runCli(['webhooks', 'listen', ...args], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('--headers-file', () => {
  it('reads one header per line, skipping blank lines and comments; an unreadable file names the flag', async () => {
    const home = await tempConfigHome();
    const file = join(home, 'h');
    await writeFile(file, '# comment\r\n\r\nAuthorization: Bearer t\r\n  X-Env: dev  \n');
    expect(await readHeaderLines(file)).toEqual(['Authorization: Bearer t', 'X-Env: dev']);
    await expect(readHeaderLines(join(home, 'missing'))).rejects.toThrow(
      /^--headers-file .*missing cannot be read \(ENOENT\)/,
    );
  });
});
