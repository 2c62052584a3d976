import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '#test-helpers/server-process.js';

// Issue 27, finding 9: the README's first call (`GET /tags` with the acme-admin token, no brand)
// answered `{"success":true,"data":[]}`. A server started as `npm start` starts it (the embedded
// PostgreSQL, the default fixtures) now shows the demo data, and a second start adds nothing.

const NOOR = 'de3b0000-0000-4000-8000-000000000001';
const JOB = 'de3d0000-0000-4000-8000-000000000001';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-demo-data-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach the data directory.
  await chmod(dataDir, 0o755);
});
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** `node server/dist/start.js` on the embedded database in dataDir, with the default fixtures. */
const start = () =>
  startServerProcess(
    { LOYALTY_DATA_DIR: path.join(dataDir, 'data'), DATABASE_URL: '', LOYALTY_SECRET_KEY: '' },
    { detached: true },
  );

/** What the README's first calls show, with the acme-admin token. */
async function firstCalls(server: ServerProcess) {
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: 'acme-admin',
      client_secret: 'acme-admin-secret',
    }),
  });
  const { access_token } = (await res.json()) as { access_token: string };
  const get = async (url: string) => {
    const answer = await fetch(`${server.url}${url}`, { headers: { authorization: `Bearer ${access_token}` } });
    return { status: answer.status, body: (await answer.json()) as any };
  };
  const members = await fetch(`${server.url}/members/list`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ brand_id: 'brand-acme' }),
  });
  const seen = {
    tags: await get('/tags'),
    member: await get(`/members/${NOOR}?brand_id=brand-acme`),
    job: await get(`/tags/demo-regulars/vouchers/${JOB}?brand_id=brand-acme`),
    members: ((await members.json()) as { data: { members: { email: string; unsubscribed: number }[] } }).data.members,
  };
  // Wallet URLs name the server's address, a new port at each start.
  return JSON.parse(JSON.stringify(seen).replaceAll(server.url, '<server>')) as typeof seen;
}

describe('a server started as `npm start` starts it', () => {
  it('answers the first calls with the demo data, and the same after a second start', async () => {
    const first = await start();
    let seen: Awaited<ReturnType<typeof firstCalls>>;
    try {
      seen = await firstCalls(first);
    } finally {
      await first.stop();
    }
    expect(seen.tags.status).toBe(200);
    expect(seen.tags.body.data.map((t: { tag: string }) => t.tag)).toEqual([
      'Regulars',
      'Newsletter readers',
      'Gift box buyers',
    ]);
    expect(seen.member.status).toBe(200);
    expect(seen.member.body).toMatchObject({
      member_id: NOOR,
      unsubscribed: false,
      profile: { email: 'noor.janssen@demo.example.com', full_name: 'Noor Janssen' },
    });
    expect(seen.member.body.storecards).toHaveLength(1);
    expect(seen.member.body.coupons).toHaveLength(1);
    expect(seen.job.status).toBe(200);
    expect(seen.job.body).toMatchObject({ status: 'done', total: 3, issued: 3, finished_at: '2026-11-02 10:00:01' });
    expect(seen.members).toHaveLength(5);
    expect(seen.members.filter((m) => m.unsubscribed)).toEqual([
      expect.objectContaining({ email: 'emma.dubois@demo.example.com' }),
    ]);

    const again = await start(); // loads the fixtures again
    try {
      expect(await firstCalls(again)).toEqual(seen);
    } finally {
      await again.stop();
    }
  }, 180_000);
});
