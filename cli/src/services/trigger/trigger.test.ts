import type { components, paths } from '@loyalty/sdk';
import { createOpenApiHttp } from 'openapi-msw';
import { describe, expect, it } from 'vitest';
import { API, fakeApiServer, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { parseTriggerType } from './index.js';
import { TRIGGER_TYPES } from './recipes.js';

type Event = components['schemas']['Event'];
type Sent = { method: string; path: string; body: unknown; idempotencyKey: string | null };

const server = fakeApiServer();
const http = createOpenApiHttp<paths>({ baseUrl: API });

/**
 * The operations the recipes use, emitting their events into a feed like the server's (cursor: the
 * count of events seen). `decoys` puts an event of another member first, so a recipe must pick its own.
 */
function sandbox({ decoys = false } = {}) {
  const events: Event[] = [];
  const sent: Sent[] = [];
  const passes = new Map<string, { member: string; coupon?: string; storecard?: string }>();
  const push = (event: Pick<Event, 'type' | 'data'>) =>
    events.push({
      id: `evt-${events.length + 1}`,
      created_at: new Date().toISOString(),
      organization_id: 'org-acme',
      ...event,
    } as Event);
  const emit = (event: Pick<Event, 'type' | 'data'>) => {
    if (decoys) push({ ...event, data: { ...event.data, member_id: '99999999-9999-4999-8999-999999999999' } });
    push(event);
  };
  server.events.removeAllListeners();
  server.events.on('request:start', async ({ request }) => {
    const url = new URL(request.url);
    if (url.pathname === '/oauth/token') return;
    const body = request.method === 'GET' ? undefined : await request.clone().json();
    sent.push({
      method: request.method,
      path: url.pathname,
      body,
      idempotencyKey: request.headers.get('idempotency-key'),
    });
  });
  server.use(
    http.post('/members', async ({ request, response }) => {
      const member_id = crypto.randomUUID();
      const body = await request.json();
      emit({ type: 'member.created', data: { member_id, brand_id: body.brand_id } });
      return response(201).json({ success: true, created: true, member_id, identifier: member_id });
    }),
    http.post('/members/{uuid}/passes', async ({ params, request, response }) => {
      const body = await request.json();
      const pass_code = `PASS-${passes.size + 1}`;
      const coupon = 'coupon_id' in body ? body.coupon_id : undefined;
      const storecard = 'storecard_id' in body ? body.storecard_id : undefined;
      passes.set(pass_code, {
        member: params.uuid,
        ...(coupon ? { coupon } : {}),
        ...(storecard ? { storecard } : {}),
      });
      if (coupon)
        emit({
          type: 'coupon.issued',
          data: { coupon_id: coupon, pass_id: `id-${pass_code}`, member_id: params.uuid, expires_at: null },
        });
      return response(201).json({ success: true, pass_code, wallet_url: `${API}/wallet/${pass_code}`, created: true });
    }),
    http.post('/passes/scan', async ({ request, response }) => {
      const { pass_code } = await request.json();
      const pass = passes.get(pass_code)!;
      const redeemed_at = new Date().toISOString();
      emit({
        type: 'coupon.redeemed',
        data: { coupon_id: pass.coupon!, pass_id: `id-${pass_code}`, member_id: pass.member, redeemed_at },
      });
      return response(200).json({
        success: true,
        pass_code,
        coupon_id: pass.coupon!,
        member_id: pass.member,
        status: 'redeemed',
        redeemed_at,
      });
    }),
    http.post('/passes/scan/storecard', async ({ request, response }) => {
      const body = await request.json();
      const pass = passes.get(body.pass_code)!;
      const points = 'points' in body ? (body.points ?? 0) : 0;
      emit({
        type: 'points.changed',
        data: {
          member_id: pass.member,
          storecard_id: pass.storecard!,
          pass_id: `id-${body.pass_code}`,
          type: 'earn',
          points,
          balance: points,
          reference: body.transaction_reference,
        },
      });
      const transaction = {
        reference: body.transaction_reference,
        type: 'earn' as const,
        points,
        balance: points,
        created_at: new Date().toISOString(),
      };
      return response(201).json({
        success: true,
        created: true,
        transaction,
        pass: { pass_code: body.pass_code, points, balance: points },
      });
    }),
    http.get('/events', ({ query, response }) => {
      const types = query.get('types')?.split(',');
      const after = query.get('after');
      const from = after === null ? events.length : Number(after);
      const data = events.slice(from).filter((e) => !types || types.includes(e.type));
      return response(200).json({ message: 'Request successful', data, next_cursor: String(events.length) });
    }),
  );
  return { events, sent, calls: () => sent.map((s) => `${s.method} ${s.path}`) };
}

const env = async (extra: NodeJS.ProcessEnv = {}) => loggedInEnv(await tempConfigHome(), extra);

describe('loyalty trigger', { timeout: 20_000 }, () => {
  it('member.created: creates a test member and prints its id and the event id', async () => {
    const api = sandbox();
    const result = await runCli(['trigger', 'member.created'], { env: await env() });
    expect(result.code, result.stderr).toBe(0);
    expect(api.calls()).toEqual(['GET /events', 'POST /members', 'GET /events']);
    const create = api.sent[1]!;
    expect(create.body).toMatchObject({
      brand_id: 'brand-acme',
      email: expect.stringMatching(/^trigger\+[0-9a-f]{12}@example\.test$/),
      first_name: 'Test',
      last_name: 'Trigger',
      unsubscribed: true,
    });
    expect(create.idempotencyKey).toBeTruthy();
    const event = api.events[0]!;
    expect(result.stderr).toContain('Triggering member.created in brand brand-acme (from LOYALTY_BRAND)');
    expect(result.stderr).toMatch(/✔ Created test member trigger\+[0-9a-f]{12}@example\.test \(/);
    expect(result.stderr).toContain(`✔ The server emitted member.created ${event.id}.`);
    expect(result.stdout).toContain(`member_id    ${(event.data as { member_id: string }).member_id}`);
    expect(result.stdout).toContain(`event_id     ${event.id}`);
  });

  it('coupon.redeemed --json: member, coupon pass, redemption; the event of this member among others', async () => {
    const api = sandbox({ decoys: true });
    const result = await runCli(['trigger', 'coupon.redeemed', '--coupon', 'coupon-welcome', '--json'], {
      env: await env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(api.calls()).toEqual([
      'GET /events',
      'POST /members',
      expect.stringMatching(/^POST \/members\/[0-9a-f-]{36}\/passes$/),
      'POST /passes/scan',
      'GET /events',
    ]);
    expect(api.sent[2]!.body).toEqual({ brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    expect(api.sent[3]!.body).toEqual({ pass_code: 'PASS-1', brand_id: 'brand-acme' });
    const printed = JSON.parse(result.stdout) as Record<string, string>;
    const ours = api.events.find((e) => e.type === 'coupon.redeemed' && e.data.member_id === printed.member_id)!;
    expect(printed).toEqual({
      type: 'coupon.redeemed',
      brand_id: 'brand-acme',
      member_id: expect.any(String),
      email: expect.stringMatching(/@example\.test$/),
      coupon_id: 'coupon-welcome',
      pass_code: 'PASS-1',
      event_id: ours.id,
    });
    // The decoy of another member came first.
    expect(api.events.findIndex((e) => e.type === 'coupon.redeemed')).toBeLessThan(api.events.indexOf(ours));
  });

  it('coupon.issued: member and coupon pass, no redemption', async () => {
    const api = sandbox();
    const result = await runCli(['trigger', 'coupon.issued', '--coupon', 'coupon-welcome', '--json'], {
      env: await env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(api.calls()).toHaveLength(4);
    expect(api.calls()).not.toContain('POST /passes/scan');
    const issued = api.events.find((e) => e.type === 'coupon.issued')!;
    expect(JSON.parse(result.stdout)).toMatchObject({ type: 'coupon.issued', event_id: issued.id });
  });

  it('points.changed: a storecard pass earning points, with a trigger- reference the event carries', async () => {
    const api = sandbox();
    const result = await runCli(['trigger', 'points.changed', '--storecard', 'card-points', '--json'], {
      env: await env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(api.calls().slice(-2)).toEqual(['POST /passes/scan/storecard', 'GET /events']);
    expect(api.sent[2]!.body).toEqual({ brand_id: 'brand-acme', storecard_id: 'card-points' });
    const printed = JSON.parse(result.stdout) as Record<string, string>;
    expect(printed.reference).toMatch(/^trigger-[0-9a-f]{12}$/);
    expect(api.sent[3]!.body).toEqual({
      pass_code: 'PASS-1',
      brand_id: 'brand-acme',
      type: 'earn',
      points: 10,
      transaction_reference: printed.reference,
    });
    const changed = api.events.find((e) => e.type === 'points.changed')!;
    expect(printed.event_id).toBe(changed.id);
    expect(result.stderr).toContain(`Earned 10 points on pass PASS-1 (reference ${printed.reference}).`);
  });

  it('without a brand setting: the brand of the first tag the token can see, and says so', async () => {
    const api = sandbox();
    const result = await runCli(['trigger', 'member.created'], { env: await env({ LOYALTY_BRAND: undefined }) });
    expect(result.code, result.stderr).toBe(0);
    expect(api.calls()[0]).toBe('GET /tags');
    expect(result.stderr).toContain('in brand brand-acme (from the first brand of the tags the token can see)');
  });

  it('an unknown event type: exit 2, the valid types and the closest one, nothing sent', async () => {
    const api = sandbox();
    const result = await runCli(['trigger', 'coupon.issue'], { env: await env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('✖ Unknown event type "coupon.issue".');
    expect(result.stderr).toContain(
      'Did you mean coupon.issued? Event types: member.created, points.changed, coupon.issued, coupon.redeemed.',
    );
    expect(api.sent).toEqual([]);
  });

  it('a recipe without its voucher flag: exit 2 naming the flag, nothing sent', async () => {
    const api = sandbox();
    const result = await runCli(['trigger', 'points.changed'], { env: await env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('✖ points.changed needs a storecard: pass --storecard <id>.');
    expect(api.sent).toEqual([]);
  });

  it('a token without passes.store: exit 4 naming the ability, after the member step', async () => {
    const api = sandbox();
    server.use(
      http.post('/members/{uuid}/passes', ({ response }) =>
        response(403).json({ message: 'This action is unauthorized.', error: 'forbidden' }),
      ),
    );
    const result = await runCli(['trigger', 'coupon.issued', '--coupon', 'coupon-welcome'], { env: await env() });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      '✖ Permission denied: issuing a pass needs the ability passes.store, which this token lacks.',
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(api.calls()).toHaveLength(3);
  });

  it('a token without webhooks.get: the event still happens, with a warning; with --wait, nothing is created', async () => {
    const api = sandbox();
    server.use(
      http.get('/events', ({ response }) =>
        response(403).json({ message: 'This action is unauthorized.', error: 'forbidden' }),
      ),
    );
    const plain = await runCli(['trigger', 'member.created'], { env: await env() });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain('needs the ability webhooks.get');
    expect(plain.stdout).not.toContain('event_id');
    expect(api.calls()).toEqual(['GET /events', 'POST /members']);

    const waiting = await runCli(['trigger', 'member.created', '--wait'], { env: await env() });
    expect(waiting.code).toBe(4);
    expect(waiting.stderr).toContain(
      'Permission denied: looking the event up in the event feed (GET /events) needs the ability webhooks.get',
    );
    expect(api.calls()).toEqual(['GET /events', 'POST /members', 'GET /events']);
  });

  it('a token of several organizations: without --organization a warning and no event id; with it, the feed is scoped', async () => {
    const api = sandbox();
    const queries: string[] = [];
    server.use(
      http.get('/events', ({ request, query, response }) => {
        queries.push(new URL(request.url).search);
        if (!query.get('organization_id'))
          return response(422).json({
            message: 'The organization_id field is required when the token has several organizations.',
            error: 'validation_failed',
            errors: { organization_id: ['The organization_id field is required.'] },
          });
        return response(200).json({ message: 'Request successful', data: [], next_cursor: '0' });
      }),
    );
    const plain = await runCli(['trigger', 'member.created'], { env: await env() });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain('! The event id will not be shown: The API rejected the request');
    expect(plain.stderr).toContain('→ Pass --organization <id> when the token reaches several organizations.');
    expect(api.calls()).toEqual(['GET /events', 'POST /members']);

    await runCli(['trigger', 'member.created', '--organization', 'org-acme', '--wait', '1'], { env: await env() });
    expect(queries.at(-1)).toContain('organization_id=org-acme');
  });

  it('--wait: an event that never shows in the feed is an error after the given seconds', async () => {
    sandbox();
    server.use(
      http.get('/events', ({ query, response }) =>
        response(200).json({ message: 'Request successful', data: [], next_cursor: query.get('after') ?? '0' }),
      ),
    );
    const started = Date.now();
    const result = await runCli(['trigger', 'member.created', '--wait', '1'], { env: await env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('✖ The member.created event did not show in the event feed within 1 s.');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const bad = await runCli(['trigger', 'member.created', '--wait', 'soon'], { env: await env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--wait must be a whole number of seconds from 1 to 300 (got "soon").');
  });
});

describe('parseTriggerType', () => {
  it('accepts the types with a recipe', () => {
    expect(parseTriggerType('points.changed')).toBe('points.changed');
  });

  it('an unknown name is a usage error with the closest type when one is near, and the list', () => {
    const hintOf = (name: string) => {
      try {
        parseTriggerType(name);
      } catch (error) {
        return `${(error as Error).message} ${(error as { hint?: string }).hint}`;
      }
      throw new Error(`${name} was accepted`);
    };
    const list = `Event types: ${TRIGGER_TYPES.join(', ')}.`;
    expect(hintOf('member_created')).toBe(`Unknown event type "member_created". Did you mean member.created? ${list}`);
    expect(hintOf('Coupon.Redeem')).toContain('Did you mean coupon.redeemed?');
    expect(hintOf('invoice.paid')).toBe(`Unknown event type "invoice.paid". ${list}`);
  });

  it('an event type of the document without a recipe is named as such, not as unknown', () => {
    expect(() => parseTriggerType('webhook_subscription.disabled')).toThrow(
      'Event type "webhook_subscription.disabled" cannot be triggered. Disable a subscription to emit it: `loyalty webhooks disable <id>`',
    );
    expect(() => parseTriggerType('webhook_subscription.failing')).toThrow(
      'Event type "webhook_subscription.failing" cannot be triggered. A subscription emits it when its deliveries keep failing',
    );
    expect(() => parseTriggerType('webhook_delivery.exhausted')).toThrow(
      'Event type "webhook_delivery.exhausted" cannot be triggered. A delivery emits it when its last attempt failed',
    );
  });
});
