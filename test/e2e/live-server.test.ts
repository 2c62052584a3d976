import { afterAll, beforeAll, expect, it } from 'vitest';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
beforeAll(async () => {
  live = await startLiveServer();
});
afterAll(() => live.close());

it('serves the API over real HTTP with rate-limit headers', async () => {
  const token = await fetchToken(live.url, 'acme-admin');
  const res = await fetch(`${live.url}/tags`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-ratelimit-limit')).toBe('100000');
  expect(await res.json()).toEqual({ success: true, data: [] });
});

it('reads the JSON body of a GET, as the spec sends it', async () => {
  const token = await fetchToken(live.url, 'acme-admin');
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${live.url}/tags`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP' }),
  });
  expect(created.status).toBe(201);
  // fetch cannot send a GET body; node:http can, as curl -X GET -d does.
  const { request } = await import('node:http');
  const body = JSON.stringify({ tag_id: 'vip', brand_id: 'brand-acme' });
  const result = await new Promise<{ status: number; json: unknown }>((resolve, reject) => {
    const req = request(
      `${live.url}/tags/members`,
      { method: 'GET', headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  expect(result).toEqual({ status: 200, json: { success: true, data: [] } });
});
