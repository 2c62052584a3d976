// End to end: `loyalty trigger <event-type>` makes the real server emit each event type: the event
// shows in the event feed (GET /events) with the ids the command printed, and a webhook
// subscription to the type gets it delivered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

type Envelope = { id: string; type: string; organization_id: string; data: Record<string, unknown> };

/** A receiver on 127.0.0.1 that keeps the envelope of every delivery. */
async function receiver() {
  const delivered: Envelope[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      delivered.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const deliveryOf = async (eventId: string): Promise<Envelope> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = delivered.find((e) => e.id === eventId);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`event ${eventId} was not delivered within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveryOf,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let live: LiveServer;
let cli: CliSandbox;
let token: string;
let hooks: Awaited<ReturnType<typeof receiver>>;

beforeAll(async () => {
  live = await startLiveServer();
  cli = await cliSandbox(live.url);
  token = await fetchToken(live.url, 'acme-admin');
  hooks = await receiver();
  const subscribed = await fetch(`${live.url}/webhook-subscriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: hooks.url,
      events: ['member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed'],
    }),
  });
  expect(subscribed.status).toBe(201);
});
afterAll(async () => {
  await hooks?.close();
  await cli?.cleanup();
  await live?.close();
});

async function feedEvent(type: string, id: string): Promise<Envelope | undefined> {
  const res = await fetch(`${live.url}/events?types=${type}&limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Envelope[] }).data.find((e) => e.id === id);
}

const passId = async (passCode: unknown): Promise<string> => {
  const [row] = await live.db.sql`SELECT id FROM passes WHERE pass_code = ${String(passCode)}`;
  return row!.id as string;
};

describe('loyalty trigger', () => {
  type Printed = Record<string, unknown>;
  /** The ids the event's data must carry: the member and its pass, by what the command printed. */
  const passOf = async (printed: Printed) => ({
    member_id: printed.member_id,
    pass_id: await passId(printed.pass_code),
  });
  const coupon = async (printed: Printed) => ({ ...(await passOf(printed)), coupon_id: 'coupon-welcome' });
  const cases: Array<{ type: string; flags: string[]; ids: (printed: Printed) => Promise<object> }> = [
    { type: 'member.created', flags: [], ids: async (p) => ({ member_id: p.member_id, brand_id: 'brand-acme' }) },
    { type: 'coupon.issued', flags: ['--coupon', 'coupon-welcome'], ids: coupon },
    { type: 'coupon.redeemed', flags: ['--coupon', 'coupon-welcome'], ids: coupon },
    {
      type: 'points.changed',
      flags: ['--storecard', 'card-points'],
      ids: async (p) => ({
        ...(await passOf(p)),
        storecard_id: 'card-points',
        type: 'earn',
        points: 10,
        reference: p.reference,
      }),
    },
  ];

  for (const { type, flags, ids } of cases) {
    it(`${type}: exit 0, the event in the feed with the printed ids, delivered to a subscription`, async () => {
      const result = await cli.run(['trigger', type, ...flags, '--json', '--wait', '20']);
      expect(result.code, describeRun(result)).toBe(0);
      const printed = JSON.parse(result.stdout) as Printed;
      expect(printed).toMatchObject({ type, brand_id: 'brand-acme', event_id: expect.any(String) });
      expect(result.stderr).toContain(`The server emitted ${type} ${String(printed.event_id)}.`);

      const expected = await ids(printed);
      const event = await feedEvent(type, String(printed.event_id));
      expect(event, `${type} ${String(printed.event_id)} in GET /events`).toMatchObject({
        type,
        organization_id: 'org-acme',
        data: expected,
      });
      const delivery = await hooks.deliveryOf(String(printed.event_id));
      expect(delivery).toMatchObject({ type, data: expected });

      // Marked as test data.
      const [member] = await live.db.sql`
        SELECT m.email, m.first_name, m.last_name, bm.unsubscribed
        FROM members m JOIN brand_members bm ON bm.member_id = m.id
        WHERE m.id = ${String(printed.member_id)}`;
      expect(member).toMatchObject({ first_name: 'Test', last_name: 'Trigger', unsubscribed: true });
      expect(member!.email).toMatch(/^trigger\+[0-9a-f]{12}@example\.test$/);
    });
  }

  it('an unknown event type: exit 2 with the valid types and the closest match, nothing created', async () => {
    const [{ count: before }] = (await live.db.sql`SELECT count(*)::int AS count FROM events`) as unknown as [
      { count: number },
    ];
    const result = await cli.run(['trigger', 'member.create']);
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('Unknown event type "member.create"');
    expect(result.stderr).toContain('Did you mean member.created?');
    expect(result.stderr).not.toMatch(/^\s+at /m);
    const [{ count: after }] = (await live.db.sql`SELECT count(*)::int AS count FROM events`) as unknown as [
      { count: number },
    ];
    expect(after).toBe(before);
  });

  it('a read-only token: exit 4 naming the ability it lacks (members.store)', async () => {
    const result = await cli.run(['trigger', 'coupon.issued', '--coupon', 'coupon-welcome'], {
      env: { LOYALTY_CLIENT_ID: 'acme-readonly', LOYALTY_CLIENT_SECRET: 'acme-readonly-secret' },
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toContain('needs the ability members.store, which this token lacks');
  });
});
