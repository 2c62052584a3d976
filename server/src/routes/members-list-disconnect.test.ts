import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';

/**
 * A client that goes away in the middle of a streamed member list gives its stream slot back
 * (config.streamsPerToken, one here), so its next list is served, not refused with 429.
 */
let t: TestServer;
let url: string;
beforeAll(async () => {
  t = await createTestServer({ port: 0, host: '127.0.0.1', streamsPerToken: 1 });
  await t.server.start();
  url = t.server.info.uri;
  await t.db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-cut', 'org-acme', 'Cut')`;
  // ~9 MB of list: far more than the server's stream buffers and the sockets' hold.
  await t.db.sql`
    WITH m AS (
      INSERT INTO members (organization_id, email, first_name, last_name)
      SELECT 'org-acme', 'cut-' || i || '@example.org', repeat('n', 150), repeat('l', 150) FROM generate_series(1, 20000) i RETURNING id
    )
    INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-cut', id FROM m`;
});
afterAll(() => t?.close());

/** POST /members/list of brand-cut: resolves with the status once the first bytes came, and the request's socket. */
function openList(token: string) {
  return new Promise<{ status: number; socket: import('node:net').Socket; text: () => Promise<string> }>(
    (resolve, reject) => {
      const req = http.request(`${url}/members/list`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        const ended = new Promise<string>((done, failed) => {
          res.on('end', () => done(Buffer.concat(parts).toString()));
          res.on('error', failed);
        });
        ended.catch(() => {});
        resolve({ status: res.statusCode ?? 0, socket: req.socket as import('node:net').Socket, text: () => ended });
      });
      req.end(JSON.stringify({ brand_id: 'brand-cut' }));
    },
  );
}

describe('a streamed member list whose client goes away', () => {
  it('gives its stream slot back: the same client is served again', async () => {
    const token = await t.tokenFor('acme-admin');
    const first = await openList(token);
    expect(first.status).toBe(200);
    // The one slot is taken while the first list streams.
    const refused = await openList(token);
    expect(refused.status).toBe(429);
    await refused.text();
    first.socket.destroy();
    // Given back once the server sees the connection close; the next list is whole.
    const next = await until(async () => {
      const list = await openList(token);
      if (list.status === 200) return list;
      await list.text();
      return null;
    }, 10_000);
    const body = JSON.parse(await next.text());
    expect(body.data.total).toBe(20000);
    expect(body.data.members).toHaveLength(20000);
  });
});
