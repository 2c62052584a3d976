import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { components } from './generated/openapi.js';
import { listItem } from './mock-api/members.js';
import { iterateEvents, iterateMemberCoupons, iterateMembers, type LoyaltyEvent } from './paginate.js';
import { api, clients, mswServer } from './test-support.js';

const server = mswServer();
const client = clients('paginate', { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, deadlineMs: 1000 });

const member = (i: number): components['schemas']['MemberListItem'] =>
  listItem({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    email: `m${i}@example.com`,
    subscribed_at: '2026-11-21 10:15:30',
  });

describe('iterateMembers', () => {
  it('posts page after page until last_page and yields every member in order', async () => {
    const all = Array.from({ length: 7 }, (_, i) => member(i));
    const bodies: unknown[] = [];
    server.use(
      http.post(`${api}/members/list`, async ({ request }) => {
        const body = (await request.json()) as { brand_id: string; page: number; per_page: number };
        bodies.push(body);
        const slice = all.slice((body.page - 1) * body.per_page, body.page * body.per_page);
        return HttpResponse.json({
          message: 'Request successful',
          data: {
            total: 7,
            last_page: 3,
            per_page: body.per_page,
            next_page_url: null,
            last_page_url: `${api}/members/list?page=3`,
            members: slice,
          },
        });
      }),
    );
    const seen = [];
    for await (const m of iterateMembers(client(), { brandId: 'brand-acme', perPage: 3 })) seen.push(m.identifier);
    expect(seen).toEqual(all.map((m) => m.identifier));
    expect(bodies).toEqual([1, 2, 3].map((page) => ({ brand_id: 'brand-acme', page, per_page: 3 })));
  });

  it('throws the LoyaltyError of a failed page', async () => {
    server.use(
      http.post(`${api}/members/list`, () =>
        HttpResponse.json({ message: 'Brand not found.', error: 'not_found' }, { status: 404 }),
      ),
    );
    const iterate = async () => {
      for await (const _ of iterateMembers(client(), { brandId: 'nope' }));
    };
    await expect(iterate()).rejects.toMatchObject({ name: 'LoyaltyError', code: 'not_found', status: 404 });
  });
});

describe('iterateMemberCoupons', () => {
  it('follows the Laravel paginator with query parameters', async () => {
    const urls: URL[] = [];
    server.use(
      http.get(`${api}/members/:uuid/coupons`, ({ request }) => {
        const url = new URL(request.url);
        urls.push(url);
        const page = Number(url.searchParams.get('page'));
        const pass = { qr_code: `CPN-${page}`, status: 'active' };
        return HttpResponse.json({ current_page: page, last_page: 2, data: [pass], total: 2, per_page: 1 });
      }),
    );
    const codes = [];
    for await (const c of iterateMemberCoupons(client(), { memberId: 'm-1', brandId: 'brand-acme', perPage: 1 }))
      codes.push(c.qr_code);
    expect(codes).toEqual(['CPN-1', 'CPN-2']);
    expect(urls[0]?.pathname).toBe('/members/m-1/coupons');
    expect(Object.fromEntries(urls[0]!.searchParams)).toEqual({ brand_id: 'brand-acme', page: '1', per_page: '1' });
  });
});

describe('iterateEvents', () => {
  const event = (i: number) =>
    ({
      id: `e${i}`,
      type: 'member.created',
      created_at: '2026-11-21T10:15:30.000Z',
      organization_id: 'org-acme',
      data: { member_id: `m${i}`, brand_id: 'brand-acme' },
    }) satisfies LoyaltyEvent;

  /** A feed of `count` events; cursors are positions. Records each request's query. */
  function feed(count: { value: number }) {
    const queries: Record<string, string>[] = [];
    server.use(
      http.get(`${api}/events`, ({ request }) => {
        const q = Object.fromEntries(new URL(request.url).searchParams);
        queries.push(q);
        const limit = Number(q.limit);
        const after = q.after === undefined ? Math.max(0, count.value - limit) : Number(q.after);
        const data = Array.from({ length: Math.max(0, Math.min(limit, count.value - after)) }, (_, i) =>
          event(after + i),
        );
        return HttpResponse.json({ message: 'Request successful', data, next_cursor: String(after + data.length) });
      }),
    );
    return queries;
  }

  it('reads from a cursor until caught up, and moves the cursor only past pages fully taken', async () => {
    const queries = feed({ value: 5 });
    const events = iterateEvents(client(), { after: '0', limit: 2 });
    const seen: string[] = [];
    const cursors: (string | undefined)[] = [];
    for await (const e of events) {
      seen.push(e.id);
      cursors.push(events.cursor);
    }
    expect(seen).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
    expect(cursors).toEqual(['0', '0', '2', '2', '4']);
    expect(events.cursor).toBe('5');
    expect(queries.map((q) => q.after)).toEqual(['0', '2', '4']);
    expect(queries[0]).toEqual({ after: '0', limit: '2' });
  });

  it('follows with long polls once caught up, until aborted', async () => {
    const count = { value: 3 };
    const queries = feed(count);
    const controller = new AbortController();
    const events = iterateEvents(client(), {
      limit: 10,
      follow: true,
      wait: 5,
      types: ['member.created', 'coupon.issued'],
      signal: controller.signal,
    });
    const seen: string[] = [];
    const run = (async () => {
      for await (const e of events) {
        seen.push(e.id);
        if (e.id === 'e2') count.value = 4;
        if (e.id === 'e3') controller.abort(new Error('enough'));
      }
    })();
    await expect(run).rejects.toThrow('enough');
    expect(seen).toEqual(['e0', 'e1', 'e2', 'e3']);
    expect(queries[0]).toEqual({ limit: '10', types: 'member.created,coupon.issued' });
    expect(queries[1]).toMatchObject({ after: '3', wait: '5' });
  });
});
