import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { filterFromFlags } from './subscription-filter.js';

const server = fakeApiServer();

const ID = '3c9e0000-0000-4000-8000-000000000001';
const subscription = {
  id: ID,
  organization_id: 'org-acme',
  url: 'https://example.com/hooks',
  events: ['points.changed', 'coupon.issued'],
  filter: null as object | null,
  active: true,
  description: null,
  disabled_reason: null,
  disabled_at: null,
  failing_since: null,
  consecutive_failures: 0,
  created_at: '2026-11-21T10:15:30.000Z',
};

describe('filterFromFlags', () => {
  it('builds the filter of the flags given, and nothing without them', () => {
    expect(filterFromFlags({ brand: [], pointsType: [] })).toBeUndefined();
    expect(filterFromFlags({ brand: ['a', 'b,a'], pointsMin: '100', pointsType: ['earn,spend'] })).toEqual({
      brand_ids: ['a', 'b'],
      points_min: 100,
      points_types: ['earn', 'spend'],
    });
    expect(filterFromFlags({ clearFilter: true })).toBeNull();
  });
  it('refuses bad flags as usage errors naming the flag', () => {
    expect(() => filterFromFlags({ pointsMin: '-1' })).toThrow(/^--points-min must be a whole number/);
    expect(() => filterFromFlags({ pointsMin: '1.5' })).toThrow(/^--points-min/);
    expect(() => filterFromFlags({ pointsType: ['earn,gift'] })).toThrow(
      /^--points-type must be earn, spend or reverse \(got gift\)/,
    );
    expect(() => filterFromFlags({ clearFilter: true, brand: ['a'] })).toThrow(/--clear-filter cannot be combined/);
  });
});

describe('loyalty webhooks: filters, replay-missing, events resend', { timeout: 20_000 }, () => {
  it('create --brand (repeatable) --points-min --points-type sends the filter and shows it', async () => {
    let body: Record<string, unknown> = {};
    server.use(
      http.post(`${API}/webhook-subscriptions`, async ({ request }) => {
        body = (await request.json()) as typeof body;
        return HttpResponse.json(
          { message: 'ok', data: { ...subscription, filter: body.filter, secret: 'whsec_abc' } },
          { status: 201 },
        );
      }),
    );
    const result = await runCli(
      [
        'webhooks',
        'create',
        '--url',
        'https://example.com/hooks',
        '--events',
        'points.changed',
        '--brand',
        'brand-acme',
        '--brand',
        'brand-outlet',
        '--points-min',
        '100',
        '--points-type',
        'earn,spend',
      ],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(body).toEqual({
      url: 'https://example.com/hooks',
      events: ['points.changed'],
      filter: { brand_ids: ['brand-acme', 'brand-outlet'], points_min: 100, points_types: ['earn', 'spend'] },
    });
    expect(result.stderr).toContain('Filter: brands brand-acme, brand-outlet; points.changed of 100 points or more');
  });

  it('create with a bad --points-type is a usage error before any call', async () => {
    const result = await runCli(['webhooks', 'create', '--url', 'https://example.com/hooks', '--points-type', 'gift'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--points-type must be earn, spend or reverse (got gift)');
  });

  it('update --brand replaces the filter; --clear-filter sends null', async () => {
    const bodies: unknown[] = [];
    server.use(
      http.patch(`${API}/webhook-subscriptions/${ID}`, async ({ request }) => {
        const body = (await request.json()) as { filter?: object | null };
        bodies.push(body);
        return HttpResponse.json({ message: 'ok', data: { ...subscription, filter: body.filter ?? null } });
      }),
    );
    const env = loggedInEnv(await tempConfigHome());
    const set = await runCli(['webhooks', 'update', ID, '--brand', 'brand-acme'], { env });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('filter:        brands brand-acme');
    const cleared = await runCli(['webhooks', 'update', ID, '--clear-filter'], { env });
    expect(cleared.code).toBe(0);
    expect(bodies).toEqual([{ filter: { brand_ids: ['brand-acme'] } }, { filter: null }]);
  });

  it("test --event --brand sends the sample and shows the server's verdict; no flags, no sample", async () => {
    const bodies: unknown[] = [];
    server.use(
      http.post(`${API}/webhook-subscriptions/${ID}/test`, async ({ request }) => {
        const text = await request.text();
        const body = text ? (JSON.parse(text) as { sample?: object }) : undefined;
        bodies.push(body);
        return HttpResponse.json({
          message: 'ok',
          data: {
            event_id: crypto.randomUUID(),
            outcome: 'delivered',
            status_code: 204,
            error: null,
            duration_ms: 3,
            response_snippet: null,
            ...(body?.sample
              ? { sample: { matches: false, reason: 'brand brand-outlet is not in the filter (brand-acme)' } }
              : {}),
          },
        });
      }),
    );
    const env = loggedInEnv(await tempConfigHome());
    const other = await runCli(['webhooks', 'test', ID, '--event', 'coupon.issued', '--brand', 'brand-outlet'], {
      env,
    });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toContain(
      'A coupon.issued of brand brand-outlet would not be delivered: brand brand-outlet is not in the filter (brand-acme).',
    );
    const json = await runCli(['webhooks', 'test', ID, '--points', '50', '--brand', 'brand-acme', '--json'], { env });
    expect(JSON.parse(json.stdout).sample).toEqual({
      matches: false,
      reason: 'brand brand-outlet is not in the filter (brand-acme)',
    });
    const plain = await runCli(['webhooks', 'test', ID], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('would');
    expect(bodies).toEqual([
      { sample: { type: 'coupon.issued', brand_id: 'brand-outlet' } },
      { sample: { type: 'points.changed', brand_id: 'brand-acme', points: 50 } },
      undefined,
    ]);
  });

  it('test --event with an unknown type is a usage error naming the closest, before any call', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const res = await runCli(['webhooks', 'test', ID, '--event', 'coupon.isued'], { env });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('coupon.issued');
  });

  it('replay-missing sends the window; events resend sends the subscription', async () => {
    let replayBody: { since?: string; until?: string } = {};
    let resendBody: unknown;
    server.use(
      http.post(`${API}/webhook-subscriptions/${ID}/replay-missing`, async ({ request }) => {
        replayBody = (await request.json()) as typeof replayBody;
        return HttpResponse.json(
          {
            message: 'ok',
            data: { id: ID, replayed: 7, since: replayBody.since, until: replayBody.until, active: true },
          },
          { status: 202 },
        );
      }),
      http.post(`${API}/events/:id/resend`, async ({ request, params }) => {
        resendBody = await request.json();
        return HttpResponse.json(
          {
            message: 'ok',
            data: {
              id: 'd0000000-0000-4000-8000-000000000001',
              event_id: params.id,
              event_type: 'points.changed',
              status: 'pending',
              attempts: [],
              next_attempt_at: '2026-11-21T10:15:30.000Z',
              next_attempt_reason: 'Resend requested (POST /events/{id}/resend).',
              created_at: '2026-11-21T10:15:30.000Z',
            },
          },
          { status: 202 },
        );
      }),
    );
    const env = loggedInEnv(await tempConfigHome());
    const replay = await runCli(
      ['webhooks', 'replay-missing', ID, '--since', '2026-11-23T06:00:00Z', '--until', '2026-11-23T08:00:00Z'],
      { env },
    );
    expect(replay.code, replay.stderr).toBe(0);
    expect(replayBody).toEqual({ since: '2026-11-23T06:00:00.000Z', until: '2026-11-23T08:00:00.000Z' });
    expect(replay.stderr).toContain('7 missed events from 2026-11-23T06:00:00.000Z');
    const badSince = await runCli(['webhooks', 'replay-missing', ID, '--since', 'yesterday'], { env });
    expect(badSince.code).toBe(2);

    const event = '6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
    const resend = await runCli(['events', 'resend', event, '--subscription', ID, '--json'], { env });
    expect(resend.code, resend.stderr).toBe(0);
    expect(resendBody).toEqual({ subscription_id: ID });
    expect(JSON.parse(resend.stdout)).toMatchObject({ event_id: event, status: 'pending' });
    const missing = await runCli(['events', 'resend', event], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--subscription');
  });
});
