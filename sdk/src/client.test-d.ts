import { expectTypeOf, test } from 'vitest';
import { createLoyaltyClient, toLoyaltyError, unwrap, type LoyaltyClient, type LoyaltyError } from './index.js';

declare const client: LoyaltyClient;

test('options take a token or client credentials, not both and not neither', () => {
  createLoyaltyClient({ baseUrl: 'http://x', token: 't' });
  createLoyaltyClient({
    baseUrl: 'http://x',
    clientCredentials: { clientId: 'a', clientSecret: 'b', scope: ['tags.get'] },
  });
  // @ts-expect-error both
  createLoyaltyClient({ baseUrl: 'http://x', token: 't', clientCredentials: { clientId: 'a', clientSecret: 'b' } });
  // @ts-expect-error neither
  createLoyaltyClient({ baseUrl: 'http://x' });
  createLoyaltyClient({ baseUrl: 'http://x', token: 't', retry: false, pacing: { windowMs: 5000 }, timeoutMs: 0 });
  // @ts-expect-error unknown retry option
  createLoyaltyClient({ baseUrl: 'http://x', token: 't', retry: { attempts: 3 } });
});

test('calls are typed by path, method, parameters and body', async () => {
  const members = await client.POST('/members/list', { body: { brand_id: 'brand-acme', page: 1, per_page: 100 } });
  if (members.data) expectTypeOf(members.data.data.members[0]!.identifier).toBeString();

  const job = await client.GET('/tags/{id}/vouchers/{job}', {
    params: { path: { id: 'vip', job: 'j' }, query: { brand_id: 'b' } },
  });
  if (job.data) expectTypeOf(job.data.status).toEqualTypeOf<'queued' | 'running' | 'done' | 'failed'>();

  // @ts-expect-error brand_id is required
  await client.GET('/tags/{id}/vouchers/{job}', { params: { path: { id: 'vip', job: 'j' }, query: {} } });
  // @ts-expect-error no such path
  await client.GET('/nope');
  // @ts-expect-error GET /tags/members takes query parameters, not a body
  await client.GET('/tags/members', { body: { tag_id: 'vip', brand_id: 'b' } });
  await client.GET('/tags/members', { params: { query: { tag_id: 'vip', brand_id: 'b' } } });
});

test('errors are values', async () => {
  const result = await client.POST('/tags', { body: { brand_id: 'b', external_reference: 'vip', tag: 'VIP' } });
  expectTypeOf(toLoyaltyError(result)).toEqualTypeOf<LoyaltyError | undefined>();
  expectTypeOf(unwrap(result).data.uuid).toBeString();
});

test('the webhook subscription lifecycle is typed (extensions of openapi.yaml)', async () => {
  const id = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
  const one = await client.GET('/webhook-subscriptions/{id}', { params: { path: { id } } });
  if (one.data) {
    expectTypeOf(one.data.data.disabled_reason).toEqualTypeOf<
      'manual' | 'endpoint_gone' | 'failing_too_long' | 'too_many_failures' | null
    >();
    expectTypeOf(one.data.data.consecutive_failures).toBeNumber();
  }
  await client.PATCH('/webhook-subscriptions/{id}', { params: { path: { id } }, body: { active: false } });
  // @ts-expect-error ping is not an event type one subscribes to
  await client.PATCH('/webhook-subscriptions/{id}', { params: { path: { id } }, body: { events: ['ping'] } });
  const recovered = await client.POST('/webhook-subscriptions/{id}/recover', {
    params: { path: { id } },
    body: { since: '2026-11-23T06:00:00Z' },
  });
  if (recovered.data) expectTypeOf(recovered.data.data.recovered).toBeNumber();
  // @ts-expect-error since is required
  await client.POST('/webhook-subscriptions/{id}/recover', { params: { path: { id } }, body: {} });
  const ping = await client.POST('/webhook-subscriptions/{id}/test', { params: { path: { id } } });
  if (ping.data) expectTypeOf(ping.data.data.outcome).toEqualTypeOf<'delivered' | 'failed'>();
  const types = await client.GET('/webhook-event-types');
  if (types.data) expectTypeOf(types.data.data[0]!.schema).toEqualTypeOf<{ [key: string]: unknown }>();
});

test('filters, replay-missing and resend are typed (extensions of issue 29)', async () => {
  const id = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
  const filter = { brand_ids: ['brand-acme'], points_min: 100, points_types: ['earn' as const] };
  const patched = await client.PATCH('/webhook-subscriptions/{id}', { params: { path: { id } }, body: { filter } });
  if (patched.data) expectTypeOf(patched.data.data.filter?.points_min).toEqualTypeOf<number | undefined>();
  await client.PATCH('/webhook-subscriptions/{id}', { params: { path: { id } }, body: { filter: null } });
  await client.PATCH('/webhook-subscriptions/{id}', {
    params: { path: { id } },
    // @ts-expect-error points_types are earn, spend or reverse
    body: { filter: { points_types: ['gift'] } },
  });
  const replay = await client.POST('/webhook-subscriptions/{id}/replay-missing', {
    params: { path: { id } },
    body: { since: '2026-11-23T06:00:00Z' },
  });
  if (replay.data) expectTypeOf(replay.data.data.replayed).toBeNumber();
  const resent = await client.POST('/events/{id}/resend', { params: { path: { id } }, body: { subscription_id: id } });
  if (resent.data) expectTypeOf(resent.data.data.status).toEqualTypeOf<'pending' | 'delivered' | 'failed'>();
  // @ts-expect-error subscription_id is required
  await client.POST('/events/{id}/resend', { params: { path: { id } }, body: {} });
});
