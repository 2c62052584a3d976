// The API for command tests: the SDK's mock (`@loyalty/sdk/testing`, typed from the generated
// paths, with the API's status codes, idempotency and headers), set up as the CLI's tests expect
// it: two clients (an admin, and a till that may not list tags), a VIP tag, and a coupon on
// every member.
import type { MockMember, MockRequest } from '@loyalty/sdk/testing';
import { mockLoyaltyApi } from '@loyalty/sdk/testing';
import type { HttpHandler } from 'msw';
import { setupServer, type SetupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export const API = 'http://api.test';

export type RecordedRequest = Pick<MockRequest, 'method' | 'path' | 'headers' | 'body'>;

export interface FakeApi {
  handlers: HttpHandler[];
  /** The requests made with a token (not those to POST /oauth/token), in the order they arrived. */
  requests: RecordedRequest[];
  /** By lower-case e-mail. */
  members: Map<string, MockMember>;
  tagMembers: Map<string, Set<string>>;
  /** Makes a signups batch answer 422 for users whose e-mail matches. */
  rejectEmail?: ((email: string) => string | undefined) | undefined;
}

export function fakeApi(): FakeApi {
  const mock = mockLoyaltyApi({
    baseUrl: API,
    brandId: 'brand-acme',
    clients: {
      'acme-admin': { secret: 'acme-admin-secret', token: 'token-acme-admin' },
      'acme-pos-1': { secret: 'acme-pos-1-secret', token: 'token-acme-pos-1', forbidden: ['GET /tags'] },
    },
    passes: () => ({
      coupons: [
        {
          pass_code: 'CPN-1',
          status: 'active',
          expiration_date: '2026-12-31',
          wallet_url: 'https://wallet.example/CPN-1',
        },
      ],
    }),
  });
  mock.tags.push({
    tag: 'VIP',
    external_reference: 'vip',
    uuid: '11111111-1111-4111-8111-111111111111',
    brand_id: 'brand-acme',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
  return {
    handlers: mock.handlers,
    get requests() {
      return mock.requests.filter((r) => r.path !== '/oauth/token');
    },
    members: mock.members,
    tagMembers: mock.tagMembers,
    get rejectEmail() {
      return mock.rejectEmail;
    },
    set rejectEmail(reject) {
      mock.rejectEmail = reject;
    },
  };
}

export interface FakeApiServerOptions {
  /** What a request no handler answers does. Default: fails the test. */
  onUnhandledRequest?: 'error' | 'bypass';
  /** Handlers after the fake API's, for what it leaves unanswered. */
  fallback?: HttpHandler[];
  /** Called with each test's fresh fake API, once its handlers are in place. */
  each?: (api: FakeApi) => void;
}

/**
 * An msw server for the test file: listening from the first test on, answering as a fresh
 * `fakeApi()` in each test (the handlers a test added are gone), closed after the last test.
 */
export function fakeApiServer(options: FakeApiServerOptions = {}): SetupServer {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: options.onUnhandledRequest ?? 'error' }));
  beforeEach(() => {
    const api = fakeApi();
    server.resetHandlers(...api.handlers, ...(options.fallback ?? []));
    options.each?.(api);
  });
  afterAll(() => server.close());
  return server;
}

/** Members m0@example.com … m<count - 1>@example.com, ids 00000000-0000-4000-9000-<i, 12 digits>, each with `fields(i)`. */
export function addMembers(api: FakeApi, count: number, fields: (i: number) => Partial<MockMember> = () => ({})): void {
  for (let i = 0; i < count; i++)
    api.members.set(`m${i}@example.com`, {
      id: `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`,
      email: `m${i}@example.com`,
      ...fields(i),
    });
}

/** A logged-in environment for `runCli`: client credentials that the fake API accepts. */
export function loggedInEnv(configHome: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    XDG_CONFIG_HOME: configHome,
    LOYALTY_API_URL: API,
    LOYALTY_CLIENT_ID: 'acme-admin',
    LOYALTY_CLIENT_SECRET: 'acme-admin-secret',
    LOYALTY_BRAND: 'brand-acme',
    ...extra,
  };
}
