import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

const server = fakeApiServer();

const subscription = {
  id: '3c9e0000-0000-4000-8000-000000000001',
  organization_id: 'org-acme',
  url: 'https://example.com/hooks',
  events: ['member.created'],
  active: true,
  created_at: '2026-11-21T10:15:30.000Z',
};

describe('loyalty webhooks', { timeout: 20_000 }, () => {
  it('create --print-secret prints only the secret', async () => {
    let body: unknown;
    server.use(
      http.post(`${API}/webhook-subscriptions`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ message: 'ok', data: { ...subscription, secret: 'whsec_abc' } }, { status: 201 });
      }),
    );
    const result = await runCli(
      ['webhooks', 'create', '--url', 'https://example.com/hooks', '--events', 'member.created', '--print-secret'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('whsec_abc\n');
    expect(body).toEqual({ url: 'https://example.com/hooks', events: ['member.created'] });
  });

  it('create rejects unknown events before calling the API, and defaults to every event', async () => {
    const bad = await runCli(
      ['webhooks', 'create', '--url', 'https://example.com/hooks', '--events', 'member.deleted'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown event member.deleted. Did you mean member.created?');
    let body: { events?: string[] } = {};
    server.use(
      http.post(`${API}/webhook-subscriptions`, async ({ request }) => {
        body = (await request.json()) as typeof body;
        return HttpResponse.json(
          { message: 'ok', data: { ...subscription, events: body.events, secret: 'whsec_abc' } },
          { status: 201 },
        );
      }),
    );
    const all = await runCli(['webhooks', 'create', '--url', 'https://example.com/hooks'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(all.code).toBe(0);
    expect(body.events).toEqual([
      'member.created',
      'points.changed',
      'coupon.issued',
      'coupon.redeemed',
      'webhook_subscription.disabled',
      'pass.installed',
      'pass.uninstalled',
      'webhook_subscription.failing',
      'webhook_delivery.exhausted',
    ]);
    expect(all.stdout).toBe('signing secret: whsec_abc\n');
    expect(all.stderr).toContain('shown only now');
  });

  it('lists subscriptions and deliveries, and retries a delivery', async () => {
    const delivery = {
      id: 'd-1',
      event_id: 'e-1',
      event_type: 'member.created',
      status: 'failed',
      attempts: [
        {
          attempt: 1,
          status_code: 500,
          error: null,
          duration_ms: 12,
          response_snippet: 'oops',
          attempted_at: '2026-11-21T10:15:31.000Z',
        },
      ],
      next_attempt_at: null,
      created_at: '2026-11-21T10:15:30.000Z',
    };
    server.use(
      http.get(`${API}/webhook-subscriptions`, () => HttpResponse.json({ message: 'ok', data: [subscription] })),
      http.get(`${API}/webhook-subscriptions/:id/deliveries`, ({ request }) => {
        expect(new URL(request.url).searchParams.get('status')).toBe('failed');
        return HttpResponse.json({ message: 'ok', data: [delivery], next_cursor: 'c2' });
      }),
      http.post(`${API}/webhook-subscriptions/:id/deliveries/:delivery/retry`, () =>
        HttpResponse.json({ message: 'ok', data: { ...delivery, status: 'pending' } }, { status: 202 }),
      ),
    );
    const env = loggedInEnv(await tempConfigHome());
    expect((await runCli(['webhooks', 'list'], { env })).stdout).toMatch(
      /^ID\s+URL\s+EVENTS\s+ACTIVE\s+CREATED\n3c9e\S+\s+https:\/\/example\.com\/hooks\s+member\.created\s+yes/,
    );
    const deliveries = await runCli(['webhooks', 'deliveries', subscription.id, '--status', 'failed'], { env });
    expect(deliveries.stdout).toMatch(/d-1\s+member\.created e-1\s+failed\s+1\s+500/);
    expect(deliveries.stderr).toContain(`More: loyalty webhooks deliveries ${subscription.id} --after c2`);
    const retried = await runCli(['webhooks', 'retry', subscription.id, 'd-1'], { env });
    expect(retried.code).toBe(0);
    expect(retried.stderr).toContain('Delivery d-1 queued again (status pending).');
  });

  it('rotate-secret --print-secret prints only the new secret', async () => {
    server.use(
      http.post(`${API}/webhook-subscriptions/:id/rotate-secret`, () =>
        HttpResponse.json({
          message: 'ok',
          data: { id: subscription.id, secret: 'whsec_new', previous_secret_expires_at: '2026-11-22T10:15:30.000Z' },
        }),
      ),
    );
    const result = await runCli(['webhooks', 'rotate-secret', subscription.id, '--print-secret'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.stdout).toBe('whsec_new\n');
  });
});
