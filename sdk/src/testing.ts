/**
 * `@loyalty/sdk/testing`: msw handlers that imitate a few endpoints of the API in memory, so an
 * integration can be tested offline, including the faults a real integration meets.
 *
 *     const api = mockLoyaltyApi({ members: 250 });
 *     const server = setupServer(...api.handlers);
 *     api.fail({ with: 'rate_limit', times: 2, retryAfter: 1 });
 *
 * Endpoints: POST /oauth/token, GET and POST /tags, POST /members, POST /members/list,
 * POST /tags/members/bulk, POST /tags/{id}/vouchers, GET /tags/{id}/vouchers/{job}, GET /events.
 * Like the server: every answer carries `X-Request-Id`; POST/PUT/PATCH with an Idempotency-Key replay their stored 2xx response
 * (`Idempotent-Replayed: true`). Requires `msw` 2 (an optional peer dependency of the SDK).
 */
import { http, HttpResponse, type HttpHandler } from 'msw';
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

export type MockFault = {
  /** Only requests to this path (for example `/tags`); default any. */
  path?: string;
  /** Only this method (for example `POST`); default any. */
  method?: string;
  /** How many matching requests fail. Default 1. */
  times?: number;
} & (
  | { with: 'rate_limit'; /** Retry-After seconds. Default 1. */ retryAfter?: number }
  | { with: 'server_error'; /** Default 503. */ status?: number }
  /** The request runs and is stored, but answers 409 idempotency_in_progress; its retry gets the replay. */
  | { with: 'in_progress' }
);

export interface MockLoyaltyApiOptions {
  /** Default `http://localhost:3000`. */
  baseUrl?: string;
  /** Brand of the seeded data. Default `brand-acme`. */
  brandId?: string;
  /** Members seeded for `POST /members/list`. Default 0. */
  members?: number;
  /** Polls a voucher job takes: queued first, running in between, done on this poll. Default 3. */
  voucherJobPolls?: number;
  /** Enforce a per-token limit with X-RateLimit-* and RateLimit-Policy headers (fixed window). */
  rateLimit?: { limit: number; windowMs: number };
}

export interface MockRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  status: number;
  /** The request's id, answered in `X-Request-Id`: the one it sent when safe, else a new UUID (like the server). */
  requestId: string;
}

export interface MockLoyaltyApi {
  handlers: HttpHandler[];
  /** Every request answered, oldest first. */
  requests: MockRequest[];
  members: Schemas['MemberListItem'][];
  tags: Schemas['Tag'][];
  events: Schemas['Event'][];
  /** Makes the next matching requests fail. */
  fail(fault: MockFault): void;
}

/** The X-Request-Id values the server keeps (others are replaced by a UUID). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:+=-]{1,128}$/;

const now = () => new Date().toISOString();
const sql = (iso: string) => iso.slice(0, 19).replace('T', ' ');

export function mockLoyaltyApi(options: MockLoyaltyApiOptions = {}): MockLoyaltyApi {
  const base = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
  const brandId = options.brandId ?? 'brand-acme';
  const jobPolls = options.voucherJobPolls ?? 3;
  const faults: (MockFault & { left: number })[] = [];
  const stored = new Map<string, { status: number; body: string; headers: [string, string][] }>();
  const windows = new Map<string, { start: number; count: number }>();
  const jobs = new Map<string, { tagId: string; polls: number; job: Schemas['VoucherJobStatus'] }>();
  const requests: MockRequest[] = [];
  let tokens = 0;

  const newMember = (email: string, fields: Partial<Schemas['MemberListItem']> = {}): Schemas['MemberListItem'] => ({
    ...{ email, full_name: null, identifier: crypto.randomUUID(), unsubscribed: 0, last_name: null, phone_number: null },
    ...{ birth_date: null, street: null, house_number: null, postcode: null, city: null, country: null, subscribed_at: sql(now()) },
    ...fields,
  });
  const members = Array.from({ length: options.members ?? 0 }, (_, i) => newMember(`member${i + 1}@example.com`, { full_name: `Member ${i + 1}` }));
  const tags: Schemas['Tag'][] = [];
  const events: Schemas['Event'][] = [];

  function rateLimitHeaders(token: string): Record<string, string> | Response {
    const limit = options.rateLimit;
    if (!limit) return {};
    const t = Date.now();
    let w = windows.get(token);
    if (!w || t >= w.start + limit.windowMs) windows.set(token, (w = { start: t, count: 0 }));
    const resetIn = Math.ceil((w.start + limit.windowMs - t) / 1000);
    const headers = {
      'x-ratelimit-limit': String(limit.limit),
      'ratelimit-policy': `"token";q=${limit.limit};w=${Math.ceil(limit.windowMs / 1000)}`,
    };
    if (w.count >= limit.limit)
      return HttpResponse.json<Schemas['RateLimitError']>(
        { message: 'Too Many Attempts.' },
        { status: 429, headers: { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': String(resetIn) } },
      );
    w.count++;
    const remaining = String(limit.limit - w.count);
    return { ...headers, 'x-ratelimit-remaining': remaining, ratelimit: `"token";r=${remaining};t=${resetIn}` };
  }

  function takeFault(method: string, path: string) {
    const fault = faults.find((f) => f.left > 0 && (!f.path || f.path === path) && (!f.method || f.method.toUpperCase() === method));
    if (fault) fault.left--;
    return fault;
  }

  type Handle = (request: Request, params: Record<string, string>) => Response | Promise<Response>;

  /** Auth, faults, rate limit and idempotency around one endpoint, like the server's lifecycle. */
  function route(method: 'get' | 'post', path: string, handle: Handle, authenticated = true): HttpHandler {
    return http[method](`${base}${path}`, async ({ request, params }) => {
      const url = new URL(request.url);
      const m = request.method;
      const key = m === 'GET' ? null : request.headers.get('idempotency-key');
      const sentId = request.headers.get('x-request-id');
      const requestId = sentId !== null && SAFE_REQUEST_ID.test(sentId) ? sentId : crypto.randomUUID();
      const respond = (response: Response) => {
        requests.push({ method: m, path: url.pathname, idempotencyKey: key, status: response.status, requestId });
        response.headers.set('x-request-id', requestId);
        return response;
      };
      const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
      if (authenticated && !token)
        return respond(HttpResponse.json<Schemas['Error']>({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 }));
      const limited = rateLimitHeaders(token ?? 'ip');
      if (limited instanceof Response) return respond(limited);
      const fault = takeFault(m, url.pathname);
      if (fault?.with === 'rate_limit')
        return respond(HttpResponse.json({ message: 'Too Many Attempts.' }, { status: 429, headers: { 'retry-after': String(fault.retryAfter ?? 1), 'x-ratelimit-remaining': '0' } }));
      if (fault?.with === 'server_error')
        return respond(HttpResponse.json({ message: 'Server Error', error: 'server_error', request_id: requestId }, { status: fault.status ?? 503 }));
      const storeKey = key && `${token} ${m} ${url.pathname} ${key}`;
      const replay = storeKey ? stored.get(storeKey) : undefined;
      if (replay)
        return respond(new Response(replay.body, { status: replay.status, headers: [...replay.headers, ['idempotent-replayed', 'true'], ...Object.entries(limited)] }));
      const response = await handle(request, params as Record<string, string>);
      if (storeKey && response.ok) stored.set(storeKey, { status: response.status, body: await response.clone().text(), headers: [...response.headers] });
      for (const [name, value] of Object.entries(limited)) response.headers.set(name, value);
      if (fault?.with === 'in_progress' && storeKey)
        return respond(
          HttpResponse.json<Schemas['IdempotencyError']>(
            { message: 'A request with this Idempotency-Key is still being processed.', error: 'idempotency_in_progress' },
            { status: 409, headers: { 'retry-after': '0' } },
          ),
        );
      return respond(response);
    });
  }

  const json = async <T>(request: Request) => (await request.json()) as T;
  const emit = (event: Omit<Schemas['MemberCreatedEvent'], 'id' | 'created_at' | 'organization_id'>) =>
    events.push({ ...event, id: crypto.randomUUID(), created_at: now(), organization_id: 'org-acme' });

  const handlers = [
    route(
      'post',
      '/oauth/token',
      async (request) => {
        const body = await json<Schemas['TokenRequest']>(request);
        return HttpResponse.json<Schemas['TokenResponse']>({ token_type: 'Bearer', access_token: `mock-token-${++tokens}`, expires_in: 3600, scope: body.scope ?? '' });
      },
      false,
    ),
    route('get', '/tags', () => HttpResponse.json<Schemas['TagListResponse']>({ success: true, data: tags })),
    route('post', '/tags', async (request) => {
      const body = await json<Schemas['CreateTagRequest']>(request);
      const tag = { ...body, uuid: crypto.randomUUID(), created_at: now(), updated_at: now() };
      tags.push(tag);
      return HttpResponse.json<Schemas['TagResponse']>({ success: true, data: tag }, { status: 201 });
    }),
    route('post', '/members', async (request) => {
      const body = await json<Schemas['CreateMemberRequest']>(request);
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.email ?? ''))
        return HttpResponse.json<Schemas['ValidationError']>(
          { message: 'The email field must be a valid email address.', error: 'validation_failed', errors: { email: ['The email field must be a valid email address.'] } },
          { status: 422 },
        );
      const found = members.find((m) => m.email.toLowerCase() === body.email.toLowerCase());
      const fullName = [body.first_name, body.last_name].filter(Boolean).join(' ') || null;
      const member = found ?? newMember(body.email, { full_name: fullName, last_name: body.last_name ?? null, unsubscribed: body.unsubscribed ? 1 : 0 });
      if (!found) {
        members.push(member);
        emit({ type: 'member.created', data: { member_id: member.identifier, brand_id: body.brand_id } });
      }
      const created = { success: true, created: !found, member_id: member.identifier, identifier: member.identifier } as const;
      return HttpResponse.json<Schemas['CreateMemberResponse']>(created, { status: found ? 200 : 201 });
    }),
    route('post', '/members/list', async (request) => {
      const body = await json<Schemas['ListMembersRequest']>(request);
      const perPage = Number(body.per_page ?? members.length) || 1;
      const page = Number(body.page ?? 1);
      const lastPage = Math.max(1, Math.ceil(members.length / perPage));
      const pageUrl = (p: number) => `${base}/members/list?page=${p}`;
      return HttpResponse.json<Schemas['ListMembersResponse']>({
        message: 'Request successful',
        data: {
          total: members.length,
          last_page: lastPage,
          per_page: perPage,
          next_page_url: page < lastPage ? pageUrl(page + 1) : null,
          last_page_url: pageUrl(lastPage),
          members: members.slice((page - 1) * perPage, page * perPage),
        },
      });
    }),
    route('post', '/tags/members/bulk', async (request) => {
      const body = await json<Schemas['TagMembersBulkRequest']>(request);
      return HttpResponse.json<Schemas['SuccessMessage']>({ success: true, message: `Added ${body.users.length} members to tag` });
    }),
    route('post', '/tags/:id/vouchers', (_request, params) => {
      const job: Schemas['VoucherJobStatus'] = {
        ...{ success: true, job_id: crypto.randomUUID(), status: 'queued', total: 0, processed: 0, issued: 0, skipped: 0, failed: 0 },
        ...{ has_errors: false, started_at: null, finished_at: null },
      };
      jobs.set(job.job_id, { tagId: params.id!, polls: 0, job });
      const { started_at: _s, finished_at: _f, ...created } = job;
      return HttpResponse.json<Schemas['VoucherJobCreated']>({ ...created, already_running: false }, { status: 202 });
    }),
    route('get', '/tags/:id/vouchers/:job', (_request, params) => {
      const entry = jobs.get(params.job!);
      if (!entry || entry.tagId !== params.id)
        return HttpResponse.json<Schemas['Error']>({ message: 'Voucher job not found.', error: 'not_found' }, { status: 404 });
      const poll = ++entry.polls;
      const total = members.length;
      if (poll >= jobPolls) Object.assign(entry.job, { status: 'done', total, processed: total, issued: total, finished_at: sql(now()) });
      else if (poll > 1) {
        const processed = Math.floor((total * (poll - 1)) / (jobPolls - 1));
        Object.assign(entry.job, { status: 'running', total, processed, issued: processed, started_at: entry.job.started_at ?? sql(now()) });
      }
      return HttpResponse.json<Schemas['VoucherJobStatus']>(entry.job);
    }),
    route('get', '/events', (request) => {
      const q = new URL(request.url).searchParams;
      const limit = Number(q.get('limit') ?? 50);
      const types = q.get('types')?.split(',');
      const from = q.has('after') ? Number(q.get('after')) : Math.max(0, events.length - limit);
      const data = events.slice(from, from + limit).filter((e) => !types || types.includes(e.type));
      const next = String(Math.min(events.length, from + limit));
      return HttpResponse.json<Schemas['EventListResponse']>({ message: 'Request successful', data, next_cursor: next });
    }),
  ];

  return {
    handlers,
    requests,
    members,
    tags,
    events,
    fail(fault) {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
  };
}
