// End to end: exactly once across a token renewal, with the built `@loyalty/sdk` against the real
// reference server. Idempotency keys are scoped to the token (openapi.yaml, `Idempotency-Key`), so a retry is only
// deduplicated when it carries the token of the first attempt. The SDK pins that token for all of
// a call's retries and renews tokens early enough that a pinned one outlives the call.
import { createLoyaltyClient, unwrap, wasReplayed } from '@loyalty/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const brandId = 'brand-acme';
const couponId = 'coupon-welcome';

let live: LiveServer;
beforeAll(async () => {
  live = await startLiveServer({}, { worker: false });
});
afterAll(() => live?.close());

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

type Sent = { method: string; path: string; authorization: string | null; key: string | null; status: number | 'lost' };

it('a pass whose answer is lost is issued once, though the token was renewed before the retry', async () => {
  // The server issues 3600 s tokens; the client is told they live 20 s, so that renewal happens
  // within the test: 20 s is shorter than a call's 60 s deadline plus the margin, so the SDK renews
  // at half-life (10 s) and a call pinned to the token may retry until 1 s before its expiry.
  const lifetimeSeconds = 20;
  const tokenRequests: number[] = [];
  const wire: Sent[] = [];
  let onLostAnswer: (() => Promise<void>) | undefined;
  const client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
    retry: { baseDelayMs: 50, maxDelayMs: 50 },
    fetch: async (request) => {
      const sent = {
        method: request.method,
        path: new URL(request.url).pathname,
        authorization: request.headers.get('authorization'),
        key: request.headers.get('idempotency-key'),
      };
      if (sent.path === '/oauth/token') {
        tokenRequests.push(Date.now());
        const response = await fetch(request);
        wire.push({ ...sent, status: response.status });
        const body = (await response.json()) as Record<string, unknown>;
        return Response.json({ ...body, expires_in: lifetimeSeconds }, { status: response.status });
      }
      const response = await fetch(request);
      const lose = onLostAnswer;
      if (lose && sent.method === 'POST') {
        // The server has run the action and answered; the answer never reaches the client.
        onLostAnswer = undefined;
        await response.body?.cancel();
        wire.push({ ...sent, status: 'lost' });
        await lose();
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      wire.push({ ...sent, status: response.status });
      return response;
    },
  });

  const member = unwrap(
    await client.POST('/members', { body: { brand_id: brandId, email: 'renewal@example.org', unsubscribed: false } }),
  ).member_id;
  const firstToken = tokenRequests[0]!;

  onLostAnswer = async () => {
    // Past half-life another call renews the token; the lost answer's retry goes out after the
    // moment the SDK used to renew at (a tenth of the lifetime before expiry), before expiry.
    await sleepUntil(firstToken + 11_000);
    expect(unwrap(await client.GET('/tags')).success).toBe(true);
    await sleepUntil(firstToken + 18_250);
  };
  const issued = await client.POST('/members/{uuid}/passes', {
    params: { path: { uuid: member } },
    body: { brand_id: brandId, coupon_id: couponId },
  });

  // One effect: the retry was answered with the stored response, no second pass was issued.
  const passes = await live.db
    .sql`SELECT pass_code FROM passes WHERE member_id = ${member} AND coupon_id = ${couponId}`;
  expect(passes).toHaveLength(1);
  expect(issued.response.status).toBe(201);
  expect(wasReplayed(issued)).toBe(true);
  expect(passes[0]!.pass_code).toBe(unwrap(issued).pass_code);

  // The renewal did happen between the attempts, and the retry kept the first attempt's token and key.
  const api = wire.filter((w) => w.path !== '/oauth/token');
  expect(api.map((w) => `${w.method} ${w.path} -> ${w.status}`)).toEqual([
    'POST /members -> 201',
    `POST /members/${member}/passes -> lost`,
    'GET /tags -> 200',
    `POST /members/${member}/passes -> 201`,
  ]);
  const [created, lost, listed, retried] = api;
  expect(tokenRequests).toHaveLength(2);
  expect(listed!.authorization).not.toBe(lost!.authorization);
  expect(lost!.authorization).toBe(created!.authorization);
  expect(retried!.authorization).toBe(lost!.authorization);
  expect(retried!.key).toBe(lost!.key);
  expect(retried!.key).toMatch(/^[0-9a-f-]{36}$/);
});
