import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { addMembersToTag, chunk, importSignups, runChunked, subscribeMembers, updateMembers } from './bulk.js';
import { api, clients, mswServer } from './test-support.js';

const server = mswServer();
const client = clients('bulk', { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, deadlineMs: 1000 });
const ids = (count: number) =>
  Array.from({ length: count }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

describe('chunk', () => {
  it('splits into pieces of at most size, keeping order', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 2)).toEqual([]);
    expect(() => chunk([1], 0)).toThrow(RangeError);
  });
});

describe('addMembersToTag', () => {
  it('sends 4,500 members as 2000 + 2000 + 500 with per-chunk reports', async () => {
    const sizes: number[] = [];
    server.use(
      http.post(`${api}/tags/members/bulk`, async ({ request }) => {
        const body = (await request.json()) as { brand_id: string; tag_id: string; users: string[] };
        expect(body).toMatchObject({ brand_id: 'brand-acme', tag_id: 'vip' });
        sizes.push(body.users.length);
        return HttpResponse.json({ success: true, message: `Added ${body.users.length} members to tag` });
      }),
    );
    const reports = await addMembersToTag(client(), { brandId: 'brand-acme', tagId: 'vip', memberIds: ids(4500) });
    expect(sizes.sort()).toEqual([2000, 2000, 500].sort());
    expect(reports.map((r) => [r.index, r.size, r.ok, r.status])).toEqual([
      [0, 2000, true, 200],
      [1, 2000, true, 200],
      [2, 500, true, 200],
    ]);
    expect(reports[2]?.data).toEqual({ success: true, message: 'Added 500 members to tag' });
    expect(reports[2]?.items).toEqual(ids(4500).slice(4000));
  });

  it('uses deterministic per-chunk idempotency keys from a prefix', async () => {
    const keys: (string | null)[] = [];
    server.use(
      http.post(`${api}/tags/members/bulk`, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return HttpResponse.json({ success: true, message: 'ok' });
      }),
    );
    const reports = await addMembersToTag(
      client(),
      { brandId: 'b', tagId: 'vip', memberIds: ids(5) },
      { chunkSize: 2, idempotencyKeyPrefix: 'import-2026-11-21' },
    );
    expect(keys.sort()).toEqual(['import-2026-11-21-0', 'import-2026-11-21-1', 'import-2026-11-21-2']);
    expect(reports.map((r) => r.idempotencyKey)).toEqual([
      'import-2026-11-21-0',
      'import-2026-11-21-1',
      'import-2026-11-21-2',
    ]);
  });

  it('reports a failed chunk as an error value and carries on with the others', async () => {
    server.use(
      http.post(`${api}/members/subscribe`, async ({ request }) => {
        const { email } = (await request.json()) as { email: string[] };
        if (email.includes('bad@example.com'))
          return HttpResponse.json(
            {
              message: 'Invalid.',
              error: 'validation_failed',
              errors: { 'email.0': ['The email.0 field must be a valid email address.'] },
            },
            { status: 422 },
          );
        return HttpResponse.json({
          message: 'Request successful',
          data: { amount: email.length, message: `Subscribed ${email.length} members` },
        });
      }),
    );
    const reports = await subscribeMembers(
      client(),
      { brandId: 'b', emails: ['a@example.com', 'bad@example.com', 'c@example.com'] },
      { chunkSize: 1 },
    );
    expect(reports.map((r) => r.ok)).toEqual([true, false, true]);
    expect(reports[1]).toMatchObject({ status: 422, error: { code: 'validation_failed' }, items: ['bad@example.com'] });
    expect(reports[2]?.data?.data.amount).toBe(1);
  });

  it('reports a chunk whose request never got a response with status 0', async () => {
    server.use(http.post(`${api}/members/signups`, () => HttpResponse.error()));
    const reports = await importSignups(client(), {
      brandId: 'b',
      users: [{ email: 'a@example.com', unsubscribed: false }],
    });
    expect(reports[0]).toMatchObject({ ok: false, status: 0, error: { code: 'network_error' } });
  });

  it('sends PUT /bulk/members chunks', async () => {
    server.use(
      http.put(`${api}/bulk/members`, async ({ request }) => {
        const { members } = (await request.json()) as { members: unknown[] };
        return HttpResponse.json({ message: 'Request successful', data: { updated: members.length, not_found: [] } });
      }),
    );
    const reports = await updateMembers(client(), {
      brandId: 'b',
      members: ids(3).map((identifier) => ({ identifier, city: 'Utrecht' })),
    });
    expect(reports[0]?.data?.data.updated).toBe(3);
  });
});

describe('runChunked', () => {
  it('keeps at most `concurrency` chunks in flight', async () => {
    let inFlight = 0;
    let max = 0;
    await runChunked(
      ids(10),
      async () => {
        inFlight++;
        max = Math.max(max, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return { data: {}, response: new Response('{}') };
      },
      { chunkSize: 1, concurrency: 3 },
    );
    expect(max).toBe(3);
  });

  it('rejects with the abort reason and starts no new chunk once aborted', async () => {
    const controller = new AbortController();
    let started = 0;
    const run = runChunked(
      ids(10),
      async (_chunk, init) => {
        started++;
        if (started === 2) controller.abort(new Error('stop'));
        if (init.signal?.aborted) throw init.signal.reason;
        return { data: {}, response: new Response('{}') };
      },
      { chunkSize: 1, concurrency: 1, signal: controller.signal },
    );
    await expect(run).rejects.toThrow('stop');
    expect(started).toBe(2);
  });

  it('refuses chunks over the API limit', async () => {
    await expect(
      runChunked(ids(1), async () => ({ response: new Response('{}') }), { chunkSize: 2001 }),
    ).rejects.toThrow(RangeError);
  });
});
