import createClient from 'openapi-fetch';
import { expectTypeOf, test } from 'vitest';
import {
  createLoyaltyClient,
  iterateMembers,
  type paths,
  type LoyaltyClient,
  type RequestHookInfo,
  type ResponseHookInfo,
  type RetryHookInfo,
} from './index.js';

declare const client: LoyaltyClient;
declare const signal: AbortSignal;

test('a call takes retry, timeoutMs and signal beside its parameters, typed', async () => {
  const tags = await client.GET('/tags', { retry: { maxAttempts: 1 }, timeoutMs: 500, signal });
  if (tags.data) expectTypeOf(tags.data.data[0]!.uuid).toBeString();
  await client.GET('/tags', { retry: false });
  await client.POST('/tags', {
    body: { brand_id: 'b', external_reference: 'vip', tag: 'VIP' },
    retry: { maxAttempts: 2, deadlineMs: 10_000 },
    hooks: { onResponse: (info) => expectTypeOf(info).toEqualTypeOf<ResponseHookInfo>() },
  });
  // @ts-expect-error retry is an options object or false
  await client.GET('/tags', { retry: 3 });
  // @ts-expect-error no such retry option
  await client.GET('/tags', { retry: { attempts: 3 } });
  // @ts-expect-error timeoutMs is a number
  await client.GET('/tags', { timeoutMs: '500' });
  // @ts-expect-error the path parameters are still required
  await client.GET('/tags/{id}/vouchers/{job}', { retry: false });
  // @ts-expect-error and the body
  await client.POST('/tags', { retry: false });
});

test('hooks and the logger are typed; hooks see no headers', () => {
  createLoyaltyClient({
    baseUrl: 'http://x',
    token: 't',
    logger: console,
    logLevel: 'debug',
    hooks: {
      onRequest: (info) => {
        expectTypeOf(info).toEqualTypeOf<RequestHookInfo>();
        expectTypeOf(info.requestId).toBeString();
        expectTypeOf(info.pacingWaitMs).toBeNumber();
        // @ts-expect-error a hook never sees the request's headers (the bearer token)
        info.headers;
      },
      onResponse: (info) => {
        expectTypeOf(info.replayed).toBeBoolean();
        expectTypeOf(info.error).toEqualTypeOf<'network_error' | 'timeout' | undefined>();
      },
      onRetry: async (info) => {
        expectTypeOf(info).toEqualTypeOf<RetryHookInfo>();
        expectTypeOf(info.delayMs).toBeNumber();
      },
    },
  });
  // @ts-expect-error no such level
  createLoyaltyClient({ baseUrl: 'http://x', token: 't', logLevel: 'verbose' });
  // @ts-expect-error a logger has debug, info, warn and error
  createLoyaltyClient({ baseUrl: 'http://x', token: 't', logger: { log: () => {} } });
});

test('the helpers take a LoyaltyClient or openapi-fetch’s own client over the same paths', () => {
  iterateMembers(client, { brandId: 'brand-acme' });
  iterateMembers(createClient<paths>({ baseUrl: 'http://x' }), { brandId: 'brand-acme' });
  const other = createClient<{ '/x': { get: { responses: { 200: { content: { 'application/json': string } } } } } }>({
    baseUrl: 'http://x',
  });
  // @ts-expect-error a client over other paths is not one
  iterateMembers(other, { brandId: 'b' });
});
