import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { onTestDatabase, root } from '#test-helpers/server-process.js';

/**
 * Issue 14 item 4: the whole log of a run (stdout and stderr of `node server/dist/start.js`) through
 * a full flow (a token, members with e-mails, a webhook subscription and a delivery, a bulk call, an
 * error, e-mails in a query string) holds none of the secrets used, and has access lines (JSON,
 * with request_id and route) and a line per delivery attempt.
 */
let db: TestDatabase;
let child: ChildProcess;
let exited: Promise<number | null>;
let log = '';
let url = '';
let receiver: HttpServer;
const received: string[] = [];
const env = onTestDatabase('');

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  child = spawn(process.execPath, ['server/dist/start.js'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      ...onTestDatabase(db.url),
      LOYALTY_WEBHOOK_ALLOW_INSECURE: '1',
      LOYALTY_LOG_LEVEL: 'debug', // the most the log says short of trace: job lines included
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /^Loyalty reference server listening on (http:\/\/\S+)$/m.exec(log);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code} before listening:\n${log}`));
    });
  });
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await exited;
  }
  await new Promise((resolve) => receiver?.close(resolve));
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('logs access and delivery lines as JSON, and never a secret, token or e-mail address it was given', async () => {
  onTestFailed(() => console.error(log));
  const clientSecret = 'acme-admin-secret';
  const tokenRes = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: clientSecret }),
  });
  expect(tokenRes.status).toBe(200);
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-request-id': `log-secrets-${method}`,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json().catch(() => null)) as any };
  };

  const sub = await api('POST', '/webhook-subscriptions', {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?key=receiver-query-key`,
    events: ['member.created'],
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  const webhookSecret = sub.json.data.secret as string;
  expect(webhookSecret).toMatch(/^whsec_/);

  const emails = ['ada.lovelace.logtest@example.org', 'grace.hopper.logtest@example.org'];
  const ids: string[] = [];
  for (const email of emails) {
    const created = await api('POST', '/members', { brand_id: 'brand-acme', email, unsubscribed: false });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    ids.push(created.json.member_id);
  }
  const found = await api('POST', '/members/uuid', {
    brand_id: 'brand-acme',
    emails: [...emails, 'nobody.logtest@example.org'],
  });
  expect(found.status).toBe(200);
  const bulk = await api('PUT', '/bulk/members', {
    brand_id: 'brand-acme',
    members: ids.map((identifier) => ({ identifier, city: 'Logtown' })),
  });
  expect(bulk.status, JSON.stringify(bulk.json)).toBe(200);
  const invalid = await api('POST', '/members', {
    brand_id: 'brand-acme',
    email: 'not-an-email-logtest',
    unsubscribed: false,
  });
  expect(invalid.status).toBe(422);
  const queried = await api('GET', `/members/list?email=${encodeURIComponent('query.logtest@example.org')}`);
  expect(queried.status).toBeLessThan(500);
  const wrongToken = await fetch(`${url}/tags`, {
    headers: { authorization: 'Bearer wrong-token-logtest-0123456789' },
  });
  expect(wrongToken.status).toBe(401);
  const badSecret = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: 'acme-admin',
      client_secret: 'wrong-client-secret-logtest',
    }),
  });
  expect(badSecret.status).toBe(401);

  // Both member.created events delivered, and their attempts logged.
  for (
    let i = 0;
    i < 300 && !(received.length >= 2 && /"event":"delivery_attempt"[^\n]*"outcome":"delivered"/.test(log));
    i++
  )
    await sleep(100);
  expect(received.length).toBeGreaterThanOrEqual(2);
  await sleep(300); // the last lines written

  child.kill('SIGTERM');
  await exited;

  const secrets = [
    clientSecret,
    token,
    webhookSecret,
    webhookSecret.replace(/^whsec_/, ''),
    ...emails,
    'nobody.logtest@example.org',
    'query.logtest@example.org',
    'not-an-email-logtest',
    'wrong-token-logtest-0123456789',
    'wrong-client-secret-logtest',
    'receiver-query-key',
    env.LOYALTY_SECRET_KEY!,
    '@example.org',
  ];
  for (const secret of secrets) expect(log.includes(secret), `the log shows ${secret}`).toBe(false);

  const records = log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const access = records.filter((r) => r.msg === 'request completed');
  expect(access.length).toBeGreaterThanOrEqual(8);
  for (const line of access) {
    expect(line).toMatchObject({
      method: expect.any(String),
      route: expect.any(String),
      status: expect.any(Number),
      duration_ms: expect.any(Number),
      request_id: expect.any(String),
    });
    expect(
      Object.keys(line)
        .filter((k) => !['level', 'time', 'pid', 'msg'].includes(k))
        .sort(),
    ).toEqual(
      ['client_id', 'duration_ms', 'method', 'organization_id', 'request_id', 'route', 'status'].filter(
        (k) => k in line,
      ),
    );
  }
  expect(access).toContainEqual(
    expect.objectContaining({
      method: 'POST',
      route: '/members',
      status: 201,
      request_id: 'log-secrets-POST',
      client_id: 'acme-admin',
    }),
  );
  expect(access).toContainEqual(expect.objectContaining({ method: 'POST', route: '/members', status: 422 }));
  expect(access).toContainEqual(expect.objectContaining({ method: 'GET', route: '/tags', status: 401 }));
  expect(access).toContainEqual(expect.objectContaining({ method: 'POST', route: '/oauth/token', status: 200 }));

  const attempts = records.filter((r) => r.event === 'delivery_attempt');
  expect(attempts).toContainEqual(
    expect.objectContaining({
      subscription_id: sub.json.data.id,
      attempt: 1,
      outcome: 'delivered',
      status_code: 204,
      duration_ms: expect.any(Number),
    }),
  );
  // graphile-worker's own lines: a job found (started) and completed.
  expect(records.some((r) => r.component === 'worker' && /^Completed task/.test(String(r.msg)))).toBe(true);
  // The line harnesses wait for, as before.
  expect(log).toMatch(/^Loyalty reference server listening on http:\/\/127\.0\.0\.1:\d+$/m);
});
