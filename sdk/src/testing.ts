/**
 * `@loyalty/sdk/testing`: msw handlers that imitate endpoints of the API in memory, so an
 * integration can be tested offline, including the faults a real integration meets.
 *
 *     const api = mockLoyaltyApi({ members: 250 });
 *     const server = setupServer(...api.handlers);
 *     api.fail({ with: 'rate_limit', times: 2, retryAfter: 1 });
 *
 * Endpoints: POST /oauth/token, GET and POST /tags, POST /tags/members/bulk,
 * POST /tags/{id}/vouchers, GET /tags/{id}/vouchers/{job}, POST /members, POST /members/list,
 * GET /members (by e-mail), GET /members/{uuid}, POST /members/uuid, POST /members/signups,
 * GET /events, POST /sandbox/organizations, DELETE /sandbox/organizations/{id}, GET and POST
 * /sandbox/clock, POST /sandbox/reset. The handlers are written with openapi-msw over the generated `paths`, so every
 * answer has the document's shape. Like the server: every answer carries `X-Request-Id`;
 * POST/PUT/PATCH with an Idempotency-Key replay their stored 2xx response
 * (`Idempotent-Replayed: true`). Requires `msw` 2 and `openapi-msw` (optional peer dependencies of the SDK).
 */
import { createOpenApiHttp } from 'openapi-msw';
import type { paths } from './generated/openapi.js';
import { addMember, now, sql, type MockContext } from './mock-api/context.js';
import { createLifecycle, served } from './mock-api/lifecycle.js';
import { memberHandlers } from './mock-api/members.js';
import { sandboxClient, sandboxHandlers } from './mock-api/sandbox.js';
import { sandboxClockHandlers } from './mock-api/sandbox-clock.js';
import type { MockLoyaltyApi, MockLoyaltyApiOptions, Schemas } from './mock-api/types.js';

export type {
  MockClient,
  MockFault,
  MockLoyaltyApi,
  MockLoyaltyApiOptions,
  MockMember,
  MockPasses,
  MockRequest,
} from './mock-api/types.js';

export function mockLoyaltyApi(options: MockLoyaltyApiOptions = {}): MockLoyaltyApi {
  const base = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
  const jobPolls = options.voucherJobPolls ?? 3;
  const jobs = new Map<string, { tagId: string; polls: number; job: Schemas['VoucherJobStatus'] }>();
  const api: MockLoyaltyApi = {
    handlers: [],
    requests: [],
    members: new Map(),
    tags: [],
    tagMembers: new Map(),
    events: [],
    sandboxOrganizations: new Map(),
    fail: (fault) => lifecycle.fail(fault),
  };
  const lifecycle = createLifecycle(options, api.requests);
  const http = createOpenApiHttp<paths>({ baseUrl: base });
  const ctx: MockContext = { http, lifecycle, api, options, base };
  for (let i = 1; i <= (options.members ?? 0); i++)
    addMember(api, { email: `member${i}@example.com`, first_name: `Member ${i}`, last_name: null });
  let tokens = 0;

  api.handlers = [
    http.post(
      '/oauth/token',
      served(
        lifecycle,
        async ({ request, response }) => {
          const form = request.headers.get('content-type')?.startsWith('application/x-www-form-urlencoded');
          const body = form
            ? (Object.fromEntries(new URLSearchParams(await request.text())) as Schemas['TokenRequest'])
            : await request.json();
          const sandbox = sandboxClient(api, body.client_id);
          const client = options.clients?.[body.client_id] ?? (sandbox && { secret: sandbox.client_secret });
          if ((options.clients || sandbox) && client?.secret !== body.client_secret)
            return response(401).json({ error: 'invalid_client' });
          const token = client?.token ?? `mock-token-${++tokens}`;
          if (client) lifecycle.tokenClients.set(token, client);
          return response(200).json({
            token_type: 'Bearer',
            access_token: token,
            expires_in: 3600,
            scope: body.scope ?? '',
          });
        },
        false,
      ),
    ),
    http.get(
      '/tags',
      served(lifecycle, ({ response }) => response(200).json({ success: true, data: api.tags })),
    ),
    http.post(
      '/tags',
      served(lifecycle, async ({ request, response }) => {
        const body = await request.json();
        const tag = { ...body, uuid: crypto.randomUUID(), created_at: now(), updated_at: now() };
        api.tags.push(tag);
        return response(201).json({ success: true, data: tag });
      }),
    ),
    http.post(
      '/tags/members/bulk',
      served(lifecycle, async ({ request, response }) => {
        const body = await request.json();
        if (body.users.length < 1 || body.users.length > 2000)
          return response(422).json({
            message: 'users must have 1 to 2000 items',
            error: 'validation_failed',
            errors: { users: ['1 to 2000'] },
          });
        const members = api.tagMembers.get(body.tag_id) ?? new Set<string>();
        for (const id of body.users) members.add(id);
        api.tagMembers.set(body.tag_id, members);
        return response(200).json({ success: true, message: `Added ${body.users.length} members to tag` });
      }),
    ),
    http.post(
      '/tags/{id}/vouchers',
      served(lifecycle, ({ params, response }) => {
        const job: Schemas['VoucherJobStatus'] = {
          ...{
            success: true,
            job_id: crypto.randomUUID(),
            status: 'queued',
            total: 0,
            processed: 0,
            issued: 0,
            skipped: 0,
            failed: 0,
          },
          ...{ has_errors: false, started_at: null, finished_at: null },
        };
        jobs.set(job.job_id, { tagId: params.id, polls: 0, job });
        const { started_at: _s, finished_at: _f, ...created } = job;
        return response(202).json({ ...created, already_running: false });
      }),
    ),
    http.get(
      '/tags/{id}/vouchers/{job}',
      served(lifecycle, ({ params, response }) => {
        const entry = jobs.get(params.job);
        if (!entry || entry.tagId !== params.id)
          return response(404).json({ message: 'Voucher job not found.', error: 'not_found' });
        const poll = ++entry.polls;
        const total = api.members.size;
        if (poll >= jobPolls)
          Object.assign(entry.job, { status: 'done', total, processed: total, issued: total, finished_at: sql(now()) });
        else if (poll > 1) {
          const processed = Math.floor((total * (poll - 1)) / (jobPolls - 1));
          Object.assign(entry.job, {
            status: 'running',
            total,
            processed,
            issued: processed,
            started_at: entry.job.started_at ?? sql(now()),
          });
        }
        return response(200).json(entry.job);
      }),
    ),
    http.get(
      '/events',
      served(lifecycle, async ({ request, query, response }) => {
        const { events } = api;
        const limit = Number(query.get('limit') ?? 50);
        const types = query.get('types')?.split(',');
        const after = query.get('after');
        const from = after !== null ? Number(after) : Math.max(0, events.length - limit);
        // Long poll, like the server: hold the request up to `wait` seconds while nothing is new.
        const until = Date.now() + Math.min(30, Number(query.get('wait') ?? 0)) * 1000;
        while (after !== null && events.length <= from && Date.now() < until && !request.signal.aborted)
          await new Promise((r) => setTimeout(r, 20));
        const data = events.slice(from, from + limit).filter((e) => !types || types.includes(e.type));
        return response(200).json({
          message: 'Request successful',
          data,
          next_cursor: String(Math.min(events.length, from + limit)),
        });
      }),
    ),
    ...memberHandlers(ctx),
    ...sandboxHandlers(ctx),
    ...sandboxClockHandlers(ctx),
  ];
  return api;
}
