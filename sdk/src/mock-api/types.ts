/** The public types of `@loyalty/sdk/testing` (the mock API). */
import type { HttpHandler } from 'msw';
import type { components } from '../generated/openapi.js';

export type Schemas = components['schemas'];

export type MockFault = {
  /** Only requests to this path (for example `/tags`); default any. */
  path?: string;
  /** Only this method (for example `POST`); default any. */
  method?: string;
  /** How many matching requests fail. Default 1. */
  times?: number;
} & (
  | { with: 'rate_limit' /** Retry-After seconds. Default 1. */; retryAfter?: number }
  | { with: 'server_error' /** Default 503. */; status?: number }
  /** The request runs and is stored, but answers 409 idempotency_in_progress; its retry gets the replay. */
  | { with: 'in_progress' }
  /**
   * The answer is held `delayMs` (default 35,000: past the SDK's 30 s per attempt) or until the
   * client gives up, then 503; the request does not run. The server's `Prefer: fault=timeout`.
   */
  | { with: 'timeout'; delayMs?: number }
  /** The connection fails without an answer (a network error); the request does not run. */
  | { with: 'network_reset' }
);

/** A client that `POST /oauth/token` accepts. */
export interface MockClient {
  secret: string;
  /** The access token it is issued. Default: a new `mock-token-<n>` each time. */
  token?: string;
  /** Requests it is refused with 403 `forbidden`, as `METHOD /path` (for example `GET /tags`). */
  forbidden?: string[];
  /**
   * The organizations its tokens reach, for the sandbox clock and reset (several: requests name one
   * with `organization_id`, else 422). Default `['org-acme']`.
   */
  organizations?: string[];
}

/** A member as the mock keeps it; the API's views of it (list item, lookup, detail) are made from it. */
export interface MockMember {
  id: string;
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean;
  /** `YYYY-MM-DD HH:MM:SS`. Default: when it is shown. */
  subscribed_at?: string;
}

/** The passes a member holds, as `GET /members/{uuid}` and `GET /members` show them. */
export interface MockPasses {
  coupons?: Schemas['PassSummary'][];
  storecards?: Schemas['PassSummary'][];
}

export interface MockLoyaltyApiOptions {
  /** Default `http://localhost:3000`. */
  baseUrl?: string;
  /** Brand of the seeded data. Default `brand-acme`. */
  brandId?: string;
  /** Members seeded (`member<n>@example.com`). Default 0. */
  members?: number;
  /** Polls a voucher job takes: queued first, running in between, done on this poll. Default 3. */
  voucherJobPolls?: number;
  /** Enforce a per-token limit with X-RateLimit-* and RateLimit-Policy headers (fixed window). */
  rateLimit?: { limit: number; windowMs: number };
  /** The clients `POST /oauth/token` accepts, by client id (others: 401 `invalid_client`). Default: any credentials. */
  clients?: Record<string, MockClient>;
  /** The passes of a member. Default none. */
  passes?: (member: MockMember) => MockPasses;
}

export interface MockRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** The answer's status (0 while the request is being answered). */
  status: number;
  /** The request's id, answered in `X-Request-Id`: the one it sent when safe, else a new UUID (like the server). */
  requestId: string;
  headers: Headers;
  /** The JSON body sent, parsed; undefined when none. */
  body: unknown;
}

export interface MockLoyaltyApi {
  handlers: HttpHandler[];
  /** Every request, in the order they arrived. */
  requests: MockRequest[];
  /** By lower-case e-mail. */
  members: Map<string, MockMember>;
  tags: Schemas['Tag'][];
  /** Member ids by tag id, as `POST /tags/members/bulk` added them. */
  tagMembers: Map<string, Set<string>>;
  events: Schemas['Event'][];
  /**
   * The live throwaway organizations `POST /sandbox/organizations` made, by id (`DELETE
   * /sandbox/organizations/{id}` removes one); `POST /oauth/token` accepts their clients.
   */
  sandboxOrganizations: Map<string, Schemas['SandboxOrganizationCreated']>;
  /** Makes member creation and sign-ups answer 422 for an e-mail this returns a message for. */
  rejectEmail?: ((email: string) => string | undefined) | undefined;
  /** Makes the next matching requests fail. */
  fail(fault: MockFault): void;
}
