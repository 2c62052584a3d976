import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from './client.js';
import type { components } from './generated/openapi.js';
import { streamMembers } from './member-stream.js';
import { listItem } from './mock-api/members.js';
import { iterateMembers } from './paginate.js';
import { api, clients, mswServer } from './test-support.js';

type MemberListItem = components['schemas']['MemberListItem'];

const server = mswServer();
const client = clients('member-stream', { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, deadlineMs: 1000 });

const member = (i: number, name = `F${i} L${i}`): MemberListItem => ({
  ...listItem({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    email: `m${i}@example.com`,
    subscribed_at: '2026-11-21 10:15:30',
  }),
  full_name: name,
});

/** The text of an unpaged list as the server writes it: the envelope head, the items, `]}}`. */
const head = (total: number) =>
  `{"message":"Request successful","data":{"total":${total},"last_page":1,"next_page_url":null,"per_page":${total},"last_page_url":"${api}/members/list?page=1","members":[`;
const listBody = (members: MemberListItem[]) =>
  `${head(members.length)}${members.map((m) => JSON.stringify(m)).join(',')}]}}`;

/** A body sent in pieces of `size` bytes, then (with `fail`) broken off instead of ended. */
function pieces(text: string, size: number, fail?: Error): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) {
        if (fail) controller.error(fail);
        else controller.close();
        return;
      }
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

const streamed = (body: ReadableStream<Uint8Array>, init?: ResponseInit) =>
  new HttpResponse(body, { ...init, headers: { 'content-type': 'application/json', 'x-request-id': 'req-list-1' } });

/**
 * A client whose transport answers with `body` directly: what it sees of a cancel is what a
 * connection would (msw neither passes a cancel on nor lets a body go unread).
 */
const direct = (body: () => ReadableStream<Uint8Array>) =>
  createLoyaltyClient({
    baseUrl: api,
    token: `direct-${Math.random()}`,
    fetch: async () => new Response(body(), { headers: { 'content-type': 'application/json' } }),
  });

async function collect(stream: AsyncIterable<MemberListItem>): Promise<MemberListItem[]> {
  const seen: MemberListItem[] = [];
  for await (const m of stream) seen.push(m);
  return seen;
}

describe('streamMembers', () => {
  it('posts one unpaged list and yields every member as its bytes arrive, whatever the chunking', async () => {
    const all = [
      member(0),
      member(1, 'Zoë "Q" \\ Ødegård 名前 🎉'),
      member(2, '}],{"members":['),
      ...Array.from({ length: 40 }, (_, i) => member(i + 3)),
    ];
    const bodies: unknown[] = [];
    server.use(
      http.post(`${api}/members/list`, async ({ request }) => {
        bodies.push(await request.json());
        return streamed(pieces(listBody(all), 3));
      }),
    );
    const stream = streamMembers(client(), { brandId: 'brand-acme' });
    expect(stream.total).toBeUndefined();
    const seen: MemberListItem[] = [];
    for await (const m of stream) {
      if (seen.length === 0) expect(stream.total, 'total is known before the first member').toBe(all.length);
      seen.push(m);
    }
    expect(seen).toEqual(all);
    expect(bodies).toEqual([{ brand_id: 'brand-acme' }]);
  });

  it('gives the same members in batches, one per piece of the body, none empty', async () => {
    const all = Array.from({ length: 30 }, (_, i) => member(i));
    server.use(http.post(`${api}/members/list`, () => streamed(pieces(listBody(all), 700))));
    const stream = streamMembers(client(), { brandId: 'brand-acme' });
    const batches: MemberListItem[][] = [];
    for await (const batch of stream.batches()) batches.push(batch);
    expect(batches.length).toBeGreaterThan(3);
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
    expect(batches.flat()).toEqual(all);
    expect(stream.total).toBe(30);
  });

  it('is not what iterateMembers uses: that pages, as the document advises above 3000 members', async () => {
    const bodies: unknown[] = [];
    server.use(
      http.post(`${api}/members/list`, async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json({
          message: 'Request successful',
          data: {
            total: 2,
            last_page: 1,
            next_page_url: null,
            per_page: 500,
            last_page_url: '',
            members: [member(1), member(2)],
          },
        });
      }),
    );
    const seen = await collect(iterateMembers(client(), { brandId: 'brand-acme' }));
    expect(seen.map((m) => m.email)).toEqual(['m1@example.com', 'm2@example.com']);
    expect(bodies).toEqual([{ brand_id: 'brand-acme', page: 1, per_page: 500 }]);
  });

  it('yields nothing for an empty list', async () => {
    server.use(http.post(`${api}/members/list`, () => streamed(pieces(listBody([]), 5))));
    const stream = streamMembers(client(), { brandId: 'brand-acme' });
    expect(await collect(stream)).toEqual([]);
    expect(stream.total).toBe(0);
  });

  it('throws stream_interrupted when the body ends before the end of the list', async () => {
    const text = listBody([member(1), member(2), member(3)]);
    server.use(http.post(`${api}/members/list`, () => streamed(pieces(text.slice(0, -4), 10))));
    const seen: MemberListItem[] = [];
    await expect(
      (async () => {
        for await (const m of streamMembers(client(), { brandId: 'brand-acme' })) seen.push(m);
      })(),
    ).rejects.toMatchObject({
      name: 'LoyaltyError',
      code: 'stream_interrupted',
      status: 200,
      requestId: 'req-list-1',
      message: expect.stringContaining('cut short'),
    });
    expect(seen.length, 'the members before the cut were yielded').toBe(2);
  });

  it('throws stream_interrupted for a body cut inside a character, invalid_response for bytes that are not UTF-8', async () => {
    const bytes = new TextEncoder().encode(listBody([member(1, 'Zoë')]));
    const cut = bytes.indexOf(0xc3) + 1; // after the first byte of ë
    server.use(
      http.post(
        `${api}/members/list`,
        () => new HttpResponse(bytes.slice(0, cut), { headers: { 'content-type': 'application/json' } }),
      ),
    );
    await expect(collect(streamMembers(client(), { brandId: 'brand-acme' }))).rejects.toMatchObject({
      code: 'stream_interrupted',
    });
    const invalid = bytes.slice();
    invalid[cut] = 0x41; // ë's second byte replaced: not UTF-8
    server.use(
      http.post(
        `${api}/members/list`,
        () => new HttpResponse(invalid, { headers: { 'content-type': 'application/json' } }),
      ),
    );
    await expect(collect(streamMembers(client(), { brandId: 'brand-acme' }))).rejects.toMatchObject({
      code: 'invalid_response',
      message: 'The member list is not UTF-8 text',
    });
  });

  it('throws stream_interrupted when the connection breaks mid-list', async () => {
    const text = listBody(Array.from({ length: 20 }, (_, i) => member(i)));
    server.use(
      http.post(`${api}/members/list`, () =>
        streamed(pieces(text.slice(0, text.length / 2), 100, new TypeError('terminated'))),
      ),
    );
    await expect(collect(streamMembers(client(), { brandId: 'brand-acme' }))).rejects.toMatchObject({
      name: 'LoyaltyError',
      code: 'stream_interrupted',
      cause: expect.objectContaining({ message: 'terminated' }),
    });
  });

  it('throws invalid_response for a body that is not the list', async () => {
    server.use(http.post(`${api}/members/list`, () => streamed(pieces('<html>Bad Gateway</html>', 100))));
    await expect(collect(streamMembers(client(), { brandId: 'brand-acme' }))).rejects.toMatchObject({
      name: 'LoyaltyError',
      code: 'invalid_response',
    });
  });

  it('throws the usual LoyaltyError of an error status (after the retries of a 5xx)', async () => {
    let calls = 0;
    server.use(
      http.post(`${api}/members/list`, () => {
        calls++;
        return HttpResponse.json({ message: 'Boom', request_id: 'req-500' }, { status: 500 });
      }),
    );
    await expect(collect(streamMembers(client(), { brandId: 'brand-acme' }))).rejects.toMatchObject({
      name: 'LoyaltyError',
      code: 'server_error',
      status: 500,
      message: 'Boom',
    });
    expect(calls, 'the request is retried until its response starts').toBe(2);
    server.use(
      http.post(`${api}/members/list`, () =>
        HttpResponse.json({ message: 'Brand not found.', error: 'not_found' }, { status: 404 }),
      ),
    );
    await expect(collect(streamMembers(client(), { brandId: 'nope' }))).rejects.toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });

  it('stops reading and throws the abort reason when its signal aborts mid-list', async () => {
    let cancelled = false;
    let sent = 0;
    const encoder = new TextEncoder();
    const local = direct(
      () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode(head(1_000_000)));
          },
          pull(controller) {
            controller.enqueue(encoder.encode(`${sent > 0 ? ',' : ''}${JSON.stringify(member(sent++))}`));
          },
          cancel() {
            cancelled = true;
          },
        }),
    );
    const controller = new AbortController();
    const seen: MemberListItem[] = [];
    await expect(
      (async () => {
        for await (const m of streamMembers(local, { brandId: 'brand-acme', signal: controller.signal })) {
          seen.push(m);
          if (seen.length === 10) controller.abort();
        }
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(10);
    await expect.poll(() => cancelled, { timeout: 2000 }).toBe(true);
    const at = sent;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent, 'nothing is read after the abort').toBe(at);
  });

  it('lets the body go when the caller stops early', async () => {
    let cancelled = false;
    const bytes = new TextEncoder().encode(listBody(Array.from({ length: 50 }, (_, i) => member(i))));
    const local = direct(
      () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(bytes.slice(0, 2000));
          },
          pull() {
            // The rest never comes: only cancel ends this body.
          },
          cancel() {
            cancelled = true;
          },
        }),
    );
    for await (const m of streamMembers(local, { brandId: 'brand-acme' })) if (m) break;
    await expect.poll(() => cancelled, { timeout: 2000 }).toBe(true);
  });
});

describe('streamMembers memory', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  /** Heap and memory outside it (array buffers, external strings) in use after a full collection. */
  const used = () => {
    gc();
    const { heapUsed, external } = process.memoryUsage();
    return heapUsed + external;
  };

  /** A list of `count` members generated as it is read, in 64 KiB pieces: the test holds none of it. */
  function generated(count: number): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    let next = 0;
    return new ReadableStream(
      {
        start(controller) {
          controller.enqueue(encoder.encode(head(count)));
        },
        pull(controller) {
          let text = '';
          while (next < count && text.length < 65_536)
            text += `${next > 0 ? ',' : ''}${JSON.stringify(member(next++, `Name ${'x'.repeat(200)} "${next}"`))}`;
          controller.enqueue(encoder.encode(next < count ? text : `${text}]}}`));
          if (next >= count) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
  }

  it('holds no more than a piece of a 50 MB body, and the measure sees a body that is held', async () => {
    const count = 120_000; // about 52 MB of JSON
    const local = direct(() => generated(count));
    const before = used();
    let peak = 0;
    let seen = 0;
    let bytes = 0;
    for await (const m of streamMembers(local, { brandId: 'brand-acme' })) {
      seen++;
      bytes += JSON.stringify(m).length + 1;
      if (seen % 10_000 === 0) peak = Math.max(peak, used() - before);
    }
    expect(seen).toBe(count);
    expect(bytes).toBeGreaterThan(50_000_000);
    expect(peak, `peak growth ${(peak / 1e6).toFixed(1)} MB while reading ${(bytes / 1e6).toFixed(0)} MB`).toBeLessThan(
      10_000_000,
    );

    // The same measure while a body is held whole (what an unstreamed read does) grows by the body.
    const start = used();
    const held = await new Response(generated(count)).text();
    expect(used() - start).toBeGreaterThan(40_000_000);
    expect(held.length).toBeGreaterThan(50_000_000);
  }, 60_000);
});
