// An in-memory stand-in for the API, served through msw, for command tests. It implements
// only what the CLI's commands use, with the API's status codes, idempotency and headers.
import { http, HttpResponse, type HttpHandler } from 'msw';

export const API = 'http://api.test';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: unknown;
}

export interface FakeApi {
  handlers: HttpHandler[];
  requests: RecordedRequest[];
  members: Map<string, { id: string; email: string; first_name?: string; last_name?: string }>;
  tagMembers: Map<string, Set<string>>;
  /** Makes a signups batch answer 422 for users whose e-mail matches. */
  rejectEmail?: (email: string) => string | undefined;
}

const json = (body: unknown, status = 200) => HttpResponse.json(body as Record<string, unknown>, { status, headers: { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599' } });

export function fakeApi(): FakeApi {
  const api: FakeApi = { handlers: [], requests: [], members: new Map(), tagMembers: new Map() };
  const idempotent = new Map<string, { body: string; response: unknown }>();
  let nextId = 1;
  const uuid = () => `00000000-0000-4000-8000-${String(nextId++).padStart(12, '0')}`;

  const record = async (request: Request): Promise<unknown> => {
    const text = request.method === 'GET' ? '' : await request.clone().text();
    const body = text ? JSON.parse(text) : undefined;
    api.requests.push({ method: request.method, path: new URL(request.url).pathname, headers: request.headers, body });
    return body;
  };

  api.handlers = [
    http.post(`${API}/oauth/token`, async ({ request }) => {
      const body = (await request.json()) as { client_id: string; client_secret: string };
      if (body.client_secret !== `${body.client_id}-secret`) return json({ error: 'invalid_client' }, 401);
      return json({ token_type: 'Bearer', access_token: `token-${body.client_id}`, expires_in: 3600, scope: '' });
    }),
    http.get(`${API}/tags`, async ({ request }) => {
      await record(request);
      if (request.headers.get('authorization') === 'Bearer token-acme-pos-1') return json({ message: 'Forbidden.', error: 'forbidden' }, 403);
      return json({ success: true, data: [{ tag: 'VIP', external_reference: 'vip', uuid: '11111111-1111-4111-8111-111111111111', brand_id: 'brand-acme', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' }] });
    }),
    http.post(`${API}/members/signups`, async ({ request }) => {
      const body = (await record(request)) as { brand_id: string; users: Array<{ email: string }> };
      const key = request.headers.get('idempotency-key') ?? '';
      const raw = JSON.stringify(body);
      const stored = idempotent.get(key);
      if (stored) {
        if (stored.body !== raw) return json({ message: 'Idempotency key reused', error: 'idempotency_key_reuse' }, 422);
        return HttpResponse.json(stored.response as Record<string, unknown>, { headers: { 'idempotent-replayed': 'true' } });
      }
      const errors: Record<string, string[]> = {};
      body.users.forEach((user, i) => {
        const error = api.rejectEmail?.(user.email);
        if (error) errors[`users.${i}.email`] = [error];
      });
      if (Object.keys(errors).length) return json({ message: 'The given data was invalid.', error: 'validation_failed', errors }, 422);
      const fresh: Record<string, string> = {};
      const found: Record<string, string> = {};
      for (const user of body.users) {
        const existing = api.members.get(user.email.toLowerCase());
        if (existing) found[user.email] = existing.id;
        else {
          const member = { ...user, id: uuid() };
          api.members.set(user.email.toLowerCase(), member);
          fresh[user.email] = member.id;
        }
      }
      const response = { message: 'Request successful', data: { new: fresh, found } };
      idempotent.set(key, { body: raw, response });
      return json(response);
    }),
    http.post(`${API}/members/uuid`, async ({ request }) => {
      const body = (await record(request)) as { emails: string[] };
      const data: Record<string, string> = {};
      for (const email of body.emails) {
        const member = api.members.get(email.toLowerCase());
        if (member) data[email] = member.id;
      }
      return json({ message: 'Request successful', data });
    }),
    http.post(`${API}/tags/members/bulk`, async ({ request }) => {
      const body = (await record(request)) as { tag_id: string; users: string[] };
      if (body.users.length < 1 || body.users.length > 2000) return json({ message: 'users must have 1 to 2000 items', error: 'validation_failed', errors: { users: ['1 to 2000'] } }, 422);
      const set = api.tagMembers.get(body.tag_id) ?? new Set<string>();
      for (const id of body.users) set.add(id);
      api.tagMembers.set(body.tag_id, set);
      return json({ success: true, message: 'Members added to tag' });
    }),
    http.get(`${API}/members`, async ({ request }) => {
      await record(request);
      const email = new URL(request.url).searchParams.get('email') ?? '';
      const member = api.members.get(email.toLowerCase());
      if (!member) return json({ message: 'Member not found', error: 'not_found' }, 404);
      return json({ success: true, email: member.email, member_id: member.id, identifier: member.id, member_full_name: null, pass_codes: [], storecards: [] });
    }),
    http.get(`${API}/members/:uuid`, async ({ request, params }) => {
      await record(request);
      const member = [...api.members.values()].find((m) => m.id === params.uuid);
      if (!member) return json({ message: 'Member not found', error: 'not_found' }, 404);
      return json({
        success: true, member_id: member.id, identifier: member.id, brand_id: 'brand-acme', unsubscribed: false, subscribed_at: '2026-01-02 03:04:05',
        profile: { email: member.email, first_name: member.first_name ?? null, last_name: member.last_name ?? null, full_name: [member.first_name, member.last_name].filter(Boolean).join(' ') || null, phone_number: null, birth_day: null, street: null, house_number: null, postcode: null, city: null, country: null },
        coupons: [{ pass_code: 'CPN-1', status: 'active', expiration_date: '2026-12-31', wallet_url: 'https://wallet.example/CPN-1' }],
        storecards: [],
      });
    }),
    http.post(`${API}/members/list`, async ({ request }) => {
      const body = (await record(request)) as { page: number; per_page: number };
      const all = [...api.members.values()];
      const page = Number(body.page);
      const perPage = Number(body.per_page);
      const lastPage = Math.max(1, Math.ceil(all.length / perPage));
      const members = all.slice((page - 1) * perPage, page * perPage).map((m) => ({
        email: m.email, full_name: [m.first_name, m.last_name].filter(Boolean).join(' ') || null, identifier: m.id, unsubscribed: 0, last_name: m.last_name ?? null,
        phone_number: null, birth_date: null, street: null, house_number: null, postcode: null, city: null, country: null, subscribed_at: '2026-01-02 03:04:05',
      }));
      return json({ message: 'Request successful', data: { total: all.length, last_page: lastPage, next_page_url: null, per_page: perPage, last_page_url: null, members } });
    }),
  ];
  return api;
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
