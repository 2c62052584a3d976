import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, type FakeApi, fakeApiServer, addMembers } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { EXPORT_COLUMNS } from './export.js';
import { passState } from './members.js';

let api: FakeApi;
const server = fakeApiServer({
  each: (fresh) => {
    api = fresh;
    addMembers(api, 2500, (i) => ({ first_name: `F${i}`, last_name: `L${i}` }));
  },
});

describe('loyalty members get', () => {
  it('looks a member up by e-mail and shows profile and passes', async () => {
    const result = await runCli(['members', 'get', 'm5@example.com'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^identifier\s+00000000-0000-4000-9000-000000000005$/m);
    expect(result.stdout).toMatch(/^name\s+F5 L5$/m);
    expect(result.stdout).toContain('coupon CPN-1 active, valid until 2026-12-31');
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /members',
      'GET /members/00000000-0000-4000-9000-000000000005',
    ]);
  });

  it('says how long a pass is valid: "valid until", "expired on", never "expired until"', () => {
    expect(passState({ status: 'active', expiration_date: '2026-12-31' })).toBe('active, valid until 2026-12-31');
    expect(passState({ status: 'expired', expiration_date: '2026-11-27' })).toBe('expired on 2026-11-27');
    expect(passState({ status: 'redeemed', expiration_date: '2026-12-31' })).toBe('redeemed (valid until 2026-12-31)');
    expect(passState({ status: 'active', expiration_date: null })).toBe('active, no expiry');
  });

  it('exits 1 with the API message for an unknown member', async () => {
    const result = await runCli(['members', 'get', 'nobody@example.com'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('✖ Member not found (404).');
  });

  it('asks for a brand when none is configured', async () => {
    const env = { ...loggedInEnv(await tempConfigHome()), LOYALTY_BRAND: '' };
    const result = await runCli(['members', 'get', 'm1@example.com'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Pass --brand <id>, set LOYALTY_BRAND');
  });
});

describe('loyalty members export', { timeout: 20_000 }, () => {
  it('streams every page as CSV', async () => {
    const result = await runCli(['members', 'export', '--per-page', '1000'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code).toBe(0);
    const rows = parse(result.stdout) as string[][];
    expect(rows[0]).toEqual([...EXPORT_COLUMNS]);
    expect(rows).toHaveLength(2501);
    expect(rows[2501 - 1]![EXPORT_COLUMNS.indexOf('email')]).toBe('m2499@example.com');
    expect(
      api.requests.filter((r) => r.path === '/members/list').map((r) => (r.body as { page: number }).page),
    ).toEqual([1, 2, 3]);
    expect(result.stderr).toContain('Exported 2,500 members of brand-acme (csv).');
  });

  it('writes JSON Lines to a file', async () => {
    const dir = await tempConfigHome();
    const result = await runCli(['members', 'export', '--format', 'jsonl', '-o', 'out.jsonl'], {
      env: loggedInEnv(dir),
      cwd: dir,
    });
    expect(result.code).toBe(0);
    const lines = (await readFile(join(dir, 'out.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2500);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      email: 'm0@example.com',
      identifier: '00000000-0000-4000-9000-000000000000',
    });
    expect((await stat(join(dir, 'out.jsonl'))).mode & 0o777, 'an export is personal data: 0600').toBe(0o600);
  });
});

describe('loyalty members subscribe / unsubscribe', () => {
  it('uses the single endpoint for one e-mail and treats "already subscribed" as done', async () => {
    server.use(
      http.patch(`${API}/members/subscribe`, () =>
        HttpResponse.json({ message: 'Member already subscribed', error: 'bad_request' }, { status: 400 }),
      ),
    );
    const result = await runCli(['members', 'subscribe', 'm1@example.com'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('m1@example.com is already subscribed to brand-acme.');
  });

  it('sends many e-mails in chunks of 2000 to the bulk endpoint', async () => {
    const bodies: Array<{ email: string[] }> = [];
    server.use(
      http.post(`${API}/members/unsubscribe`, async ({ request }) => {
        const body = (await request.json()) as { email: string[] };
        bodies.push(body);
        return HttpResponse.json({
          message: 'ok',
          data: { amount: body.email.length, message: `Unsubscribed ${body.email.length} members` },
        });
      }),
    );
    const dir = await tempConfigHome();
    const list = Array.from({ length: 2100 }, (_, i) => `m${i}@example.com`).join('\n');
    const result = await runCli(['members', 'unsubscribe', '--file', '-', '--json'], {
      env: loggedInEnv(dir),
      stdin: list,
    });
    expect(result.code).toBe(0);
    expect(bodies.map((b) => b.email.length)).toEqual([2000, 100]);
    expect(JSON.parse(result.stdout)).toEqual({ requested: 2100, changed: 2100 });
  });
});

describe('loyalty members update', () => {
  it('sends only the fields given, and null for --clear', async () => {
    let body: unknown;
    server.use(
      http.put(`${API}/members/:uuid`, async ({ request, params }) => {
        body = await request.json();
        return HttpResponse.json({
          success: true,
          member_id: params.uuid,
          identifier: params.uuid,
          brand_id: 'brand-acme',
          unsubscribed: false,
          subscribed_at: '2026-01-02 03:04:05',
          profile: {
            email: 'm1@example.com',
            first_name: 'Ada',
            last_name: 'L1',
            full_name: 'Ada L1',
            phone_number: null,
            birth_day: null,
            street: null,
            house_number: null,
            postcode: null,
            city: 'London',
            country: null,
          },
          coupons: [],
          storecards: [],
        });
      }),
    );
    const result = await runCli(
      ['members', 'update', 'm1@example.com', '--first-name', 'Ada', '--city', 'London', '--clear', 'phone-number'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code).toBe(0);
    expect(body).toEqual({ brand_id: 'brand-acme', first_name: 'Ada', city: 'London', phone_number: null });
    expect(result.stderr).toContain('✔ Updated first_name, city, phone_number of m1@example.com.');
  });

  it('refuses to send an empty update', async () => {
    const result = await runCli(['members', 'update', 'm1@example.com'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Nothing to change.');
  });
});

describe('loyalty passes issue', () => {
  it('issues to a member found by e-mail and prints code and wallet link', async () => {
    let body: unknown;
    server.use(
      http.post(`${API}/members/:uuid/passes`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(
          { success: true, pass_code: 'CPN-9', wallet_url: 'https://wallet.example/CPN-9', created: true },
          { status: 201 },
        );
      }),
    );
    const result = await runCli(
      ['passes', 'issue', 'm2@example.com', '--coupon', 'coupon-welcome', '--expires', 'never'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code).toBe(0);
    expect(body).toEqual({ brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: 'no-date' });
    expect(result.stdout).toBe('CPN-9  https://wallet.example/CPN-9\n');
  });
});

describe('loyalty members delete', () => {
  it('refuses without --yes when there is no terminal, and deletes with it', async () => {
    let deleted: string | undefined;
    server.use(
      http.delete(`${API}/members/:uuid`, ({ params, request }) => {
        deleted = `${String(params.uuid)} ${new URL(request.url).searchParams.get('brand_id')}`;
        return HttpResponse.json({ success: true, message: 'Member deleted' });
      }),
    );
    const env = loggedInEnv(await tempConfigHome());
    const refused = await runCli(['members', 'delete', 'm1@example.com'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Pass --yes to confirm.');
    expect(deleted).toBeUndefined();
    const done = await runCli(['members', 'delete', 'm1@example.com', '--yes'], { env });
    expect(done.code).toBe(0);
    expect(deleted).toBe('00000000-0000-4000-9000-000000000001 brand-acme');
  });
});
