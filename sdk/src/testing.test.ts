import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from './client.js';
import { toLoyaltyError } from './errors.js';
import { wasReplayed } from './idempotency.js';
import { waitForVoucherJob } from './jobs.js';
import { iterateEvents, iterateMembers } from './paginate.js';
import { clients, mswServer } from './test-support.js';
import { mockLoyaltyApi, type MockLoyaltyApi } from './testing.js';

const baseUrl = 'http://mock.test';
const server = mswServer();
const newClient = clients('testing', { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2, deadlineMs: 5000 }, baseUrl);
function setup(options: Parameters<typeof mockLoyaltyApi>[0] = {}): {
  api: MockLoyaltyApi;
  client: ReturnType<typeof createLoyaltyClient>;
} {
  const api = mockLoyaltyApi({ baseUrl, ...options });
  server.use(...api.handlers);
  return { api, client: newClient() };
}
const tagBody = { brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP' };

describe('mockLoyaltyApi', () => {
  it('answers the SDK like the API: create, idempotent member create, paginated list', async () => {
    const { api, client } = setup({ members: 250 });
    const tag = await client.POST('/tags', { body: tagBody });
    expect(tag.response.status).toBe(201);
    expect(api.tags).toHaveLength(1);

    const body = { brand_id: 'brand-acme', email: 'New@Example.com', unsubscribed: false };
    const first = await client.POST('/members', { body });
    const again = await client.POST('/members', { body: { ...body, email: 'new@example.com' } });
    expect([first.response.status, first.data?.created, again.response.status, again.data?.created]).toEqual([
      201,
      true,
      200,
      false,
    ]);
    expect(again.data?.identifier).toBe(first.data?.identifier);

    let count = 0;
    for await (const _ of iterateMembers(client, { brandId: 'brand-acme', perPage: 100 })) count++;
    expect(count).toBe(251);
    expect(api.requests.filter((r) => r.path === '/members/list')).toHaveLength(3);
  });

  it('requires a bearer token', async () => {
    const api = mockLoyaltyApi({ baseUrl });
    server.use(...api.handlers);
    const response = await fetch(`${baseUrl}/tags`);
    expect(response.status).toBe(401);
  });

  it('fault rate_limit: 429 with Retry-After, which the client waits out', async () => {
    const { api, client } = setup();
    api.fail({ with: 'rate_limit', times: 2, retryAfter: 0, path: '/tags' });
    const { response } = await client.GET('/tags');
    expect(response.status).toBe(200);
    expect(api.requests.map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it('fault in_progress: 409 idempotency_in_progress, then the retry gets the replay and the action ran once', async () => {
    const { api, client } = setup();
    api.fail({ with: 'in_progress', method: 'POST', path: '/tags' });
    const result = await client.POST('/tags', { body: tagBody });
    expect(result.response.status).toBe(201);
    expect(wasReplayed(result)).toBe(true);
    expect(api.tags).toHaveLength(1);
    const [a, b] = api.requests;
    expect([a?.status, b?.status]).toEqual([409, 201]);
    expect(a?.idempotencyKey).toBe(b?.idempotencyKey);
  });

  it('fault server_error: a burst of 5xx that retries ride out, or that outlasts them', async () => {
    const { api, client } = setup();
    api.fail({ with: 'server_error', times: 3 });
    expect((await client.GET('/tags')).response.status).toBe(200);
    api.fail({ with: 'server_error', times: 4, status: 502 });
    const result = await client.GET('/tags');
    expect(toLoyaltyError(result)).toMatchObject({ status: 502, code: 'server_error' });
  });

  it('fault timeout: the answer is held past the client timeout, the retry succeeds, the request ran once', async () => {
    const api = mockLoyaltyApi({ baseUrl });
    server.use(...api.handlers);
    const client = createLoyaltyClient({
      baseUrl,
      token: 'testing-timeout',
      timeoutMs: 100,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, deadlineMs: 5000 },
    });
    api.fail({ with: 'timeout', delayMs: 2000, method: 'POST', path: '/tags' });
    const started = Date.now();
    const result = await client.POST('/tags', { body: tagBody });
    expect(result.response.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(1500); // the client gave up on the held answer
    expect(api.tags).toHaveLength(1);
    expect(api.requests.map((r) => r.status)).toEqual([503, 201]);
  });

  it('fault network_reset: a network error without an answer; the retry succeeds and the request ran once', async () => {
    const { api, client } = setup();
    api.fail({ with: 'network_reset', times: 2, method: 'POST', path: '/tags' });
    const result = await client.POST('/tags', { body: tagBody });
    expect(result.response.status).toBe(201);
    expect(api.tags).toHaveLength(1);
    expect(api.requests.map((r) => r.status)).toEqual([0, 0, 201]);
    const bare = mockLoyaltyApi({ baseUrl });
    server.use(...bare.handlers);
    bare.fail({ with: 'network_reset' });
    await expect(fetch(`${baseUrl}/tags`, { headers: { authorization: 'Bearer x' } })).rejects.toThrow(TypeError);
  });

  it('runs a slow voucher job: queued, running, then done over N polls', async () => {
    const { client } = setup({ members: 10, voucherJobPolls: 4 });
    const created = await client.POST('/tags/{id}/vouchers', {
      params: { path: { id: 'vip' } },
      body: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' },
    });
    expect(created.response.status).toBe(202);
    const seen = [];
    for await (const job of waitForVoucherJob(client, {
      tagId: 'vip',
      jobId: created.data!.job_id,
      brandId: 'brand-acme',
      intervalMs: 1,
    }))
      seen.push(`${job.status} ${job.processed}/${job.total}`);
    expect(seen).toEqual(['queued 0/0', 'running 3/10', 'running 6/10', 'done 10/10']);
  });

  it('enforces a rate limit with headers, which the client paces under', async () => {
    const { api, client } = setup({ rateLimit: { limit: 20, windowMs: 1000 } });
    await Promise.all(Array.from({ length: 50 }, () => client.GET('/tags')));
    expect(api.requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(api.requests).toHaveLength(50);
  }, 10_000);

  it('records member.created events for the event feed', async () => {
    const { client } = setup();
    await client.POST('/members', { body: { brand_id: 'brand-acme', email: 'a@example.com', unsubscribed: false } });
    const types = [];
    for await (const e of iterateEvents(client, { after: '0' })) types.push(e.type);
    expect(types).toEqual(['member.created']);
  });

  it('issues tokens to client credentials', async () => {
    const api = mockLoyaltyApi({ baseUrl });
    server.use(...api.handlers);
    const client = createLoyaltyClient({ baseUrl, clientCredentials: { clientId: 'acme-admin', clientSecret: 's' } });
    expect((await client.GET('/tags')).response.status).toBe(200);
    expect(api.requests.map((r) => r.path)).toEqual(['/oauth/token', '/tags']);
  });

  it('refuses unknown client credentials, and a client its forbidden requests, when clients are given', async () => {
    const api = mockLoyaltyApi({
      baseUrl,
      clients: { till: { secret: 's', token: 'till-token', forbidden: ['GET /tags'] } },
    });
    server.use(...api.handlers);
    const token = (body: object) =>
      fetch(`${baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await token({ grant_type: 'client_credentials', client_id: 'till', client_secret: 'wrong' })).status).toBe(
      401,
    );
    const issued = (await (
      await token({ grant_type: 'client_credentials', client_id: 'till', client_secret: 's' })
    ).json()) as { access_token: string };
    expect(issued.access_token).toBe('till-token');
    const client = createLoyaltyClient({ baseUrl, token: issued.access_token, retry: false });
    expect(toLoyaltyError(await client.GET('/tags'))).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('imports sign-ups, finds their ids by e-mail, adds them to a tag and shows a member', async () => {
    const { api, client } = setup();
    api.rejectEmail = (email) => (email.startsWith('no') ? 'Not this one.' : undefined);
    const users = [
      { email: 'ada@example.org', first_name: 'Ada', last_name: 'Lovelace' },
      { email: 'grace@example.org' },
    ];
    const rejected = await client.POST('/members/signups', {
      body: { brand_id: 'brand-acme', users: [...users, { email: 'no@example.org' }] },
    });
    expect(rejected.response.status).toBe(422);
    expect(rejected.error).toMatchObject({ errors: { 'users.2.email': ['Not this one.'] } });
    const first = await client.POST('/members/signups', { body: { brand_id: 'brand-acme', users } });
    const again = await client.POST('/members/signups', { body: { brand_id: 'brand-acme', users } });
    expect(Object.keys(first.data!.data.new)).toEqual(['ada@example.org', 'grace@example.org']);
    expect(again.data?.data.found).toEqual(first.data?.data.new);
    const ids = await client.POST('/members/uuid', {
      body: { brand_id: 'brand-acme', emails: ['ADA@example.org', 'nobody@example.org'] },
    });
    const ada = ids.data!.data['ADA@example.org']!;
    expect(Object.keys(ids.data!.data)).toEqual(['ADA@example.org']);
    await client.POST('/tags/members/bulk', { body: { brand_id: 'brand-acme', tag_id: 'vip', users: [ada] } });
    expect([...(api.tagMembers.get('vip') ?? [])]).toEqual([ada]);
    const shown = await client.GET('/members/{uuid}', {
      params: { path: { uuid: ada }, query: { brand_id: 'brand-acme' } },
    });
    expect(shown.data?.profile).toMatchObject({ email: 'ada@example.org', full_name: 'Ada Lovelace' });
    const found = await client.GET('/members', {
      params: { query: { brand_id: 'brand-acme', email: 'ada@example.org' } },
    });
    expect(found.data?.member_id).toBe(ada);
    expect(api.requests.find((r) => r.path === '/members/uuid')?.body).toEqual({
      brand_id: 'brand-acme',
      emails: ['ADA@example.org', 'nobody@example.org'],
    });
  });

  it('answers 422 idempotency_key_reuse when a key comes back with another request', async () => {
    const { client } = setup();
    const headers = { 'idempotency-key': 'k-1' };
    await client.POST('/tags', { body: tagBody, headers });
    const reused = await client.POST('/tags', { body: { ...tagBody, tag: 'Other' }, headers });
    expect(toLoyaltyError(reused)).toMatchObject({ status: 422, code: 'idempotency_key_reuse' });
  });
});
