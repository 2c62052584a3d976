// The API for command tests: the SDK's mock (`@loyalty/sdk/testing`, typed from the generated
// paths, with the API's status codes, idempotency and headers), set up as the CLI's tests expect
// it: two clients (an admin, and a till that may not list tags), a VIP tag, and a coupon on
// every member.
import type { MockMember, MockRequest } from '@loyalty/sdk/testing';
import { mockLoyaltyApi } from '@loyalty/sdk/testing';
import type { HttpHandler } from 'msw';

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
