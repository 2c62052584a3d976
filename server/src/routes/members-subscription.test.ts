import { describe, expect, it } from 'vitest';
import { useApiTestServer, type Auth, type TestServer } from '#test-helpers/server.js';

let t: TestServer, admin: Auth, readonly: Auth, globex: Auth;
const call = useApiTestServer((api) => ({ t, admin, readonly, globex } = api));
const member = async (email: string, unsubscribed = false) =>
  (await call('POST', '/members', { brand_id: 'brand-acme', email, unsubscribed })).body.member_id as string;
const state = async (id: string) =>
  (await call('GET', `/members/${id}?brand_id=brand-acme`)).body.unsubscribed as boolean;

describe('PATCH /members/subscribe and /members/unsubscribe', () => {
  it('subscribes an unsubscribed member, then answers 400 already_subscribed', async () => {
    const id = await member('sub@example.org', true);
    expect(await call('PATCH', '/members/subscribe', { brand_id: 'brand-acme', email: 'SUB@example.org' })).toEqual({
      status: 200,
      body: { message: 'Request successful', data: 'User subscribed' },
    });
    expect(await state(id)).toBe(false);
    const again = await call('PATCH', '/members/subscribe', { brand_id: 'brand-acme', email: 'sub@example.org' });
    expect(again).toMatchObject({ status: 400, body: { error: 'already_subscribed' } });
  });

  it('unsubscribes a member, and repeating it is still a 200', async () => {
    const id = await member('unsub@example.org');
    const res = await call('PATCH', '/members/unsubscribe', { brand_id: 'brand-acme', email: 'unsub@example.org' });
    expect(res).toEqual({ status: 200, body: { message: 'Request successful', data: 'User unsubscribed' } });
    expect(await state(id)).toBe(true);
    expect(
      (await call('PATCH', '/members/unsubscribe', { brand_id: 'brand-acme', email: 'unsub@example.org' })).status,
    ).toBe(200);
  });

  it('answers 404 for an unknown brand, member, or another organization; 422 for bad input; 403 without members.store', async () => {
    await member('guard@example.org', true);
    for (const path of ['/members/subscribe', '/members/unsubscribe']) {
      expect((await call('PATCH', path, { brand_id: 'brand-nope', email: 'guard@example.org' })).status).toBe(404);
      expect((await call('PATCH', path, { brand_id: 'brand-acme', email: 'nobody@example.org' })).status).toBe(404);
      expect((await call('PATCH', path, { brand_id: 'brand-acme', email: 'guard@example.org' }, globex)).status).toBe(
        404,
      );
      expect((await call('PATCH', path, { brand_id: 'brand-acme' })).body.errors).toHaveProperty('email');
      expect((await call('PATCH', path, { brand_id: 'brand-acme', email: ['guard@example.org'] })).status).toBe(422);
      expect((await call('PATCH', path, { brand_id: 'brand-acme', email: 'guard@example.org' }, readonly)).status).toBe(
        403,
      );
    }
  });
});

describe('POST /members/subscribe and /members/unsubscribe (bulk)', () => {
  it('counts only members whose state changes', async () => {
    const a = await member('bulk-a@example.org', true);
    const b = await member('bulk-b@example.org', false);
    const c = await member('bulk-c@example.org', true);
    const res = await call('POST', '/members/subscribe', {
      brand_id: 'brand-acme',
      email: [
        'BULK-A@example.org',
        'bulk-b@example.org',
        'bulk-c@example.org',
        'nobody@example.org',
        'bulk-a@example.org',
      ],
    });
    expect(res).toEqual({
      status: 200,
      body: { message: 'Request successful', data: { amount: 2, message: 'Subscribed 2 members' } },
    });
    expect([await state(a), await state(b), await state(c)]).toEqual([false, false, false]);
    const un = await call('POST', '/members/unsubscribe', {
      brand_id: 'brand-acme',
      email: ['bulk-a@example.org', 'bulk-b@example.org'],
    });
    expect(un.body.data).toEqual({ amount: 2, message: 'Unsubscribed 2 members' });
    const again = await call('POST', '/members/unsubscribe', {
      brand_id: 'brand-acme',
      email: ['bulk-a@example.org', 'bulk-b@example.org', 'bulk-c@example.org'],
    });
    expect(again.body.data).toEqual({ amount: 1, message: 'Unsubscribed 1 members' });
  });

  it('lets bulk calls over the same members in opposite orders all succeed', async () => {
    const emails = Array.from({ length: 150 }, (_, i) => `order-${i}@example.org`);
    await call('POST', '/members/signups', { brand_id: 'brand-acme', users: emails.map((email) => ({ email })) });
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([
        call('POST', '/members/unsubscribe', { brand_id: 'brand-acme', email: emails }),
        call('POST', '/members/unsubscribe', { brand_id: 'brand-acme', email: emails.slice().reverse() }),
        call('POST', '/members/subscribe', { brand_id: 'brand-acme', email: emails.slice().reverse() }),
        call('POST', '/members/subscribe', { brand_id: 'brand-acme', email: emails }),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    }
  });

  it('bulk subscribe answers 404 when no e-mail matches; bulk unsubscribe answers 200 with amount 0', async () => {
    expect(
      (await call('POST', '/members/subscribe', { brand_id: 'brand-acme', email: ['nobody@example.org'] })).status,
    ).toBe(404);
    expect(
      (await call('POST', '/members/unsubscribe', { brand_id: 'brand-acme', email: ['nobody@example.org'] })).body.data,
    ).toEqual({ amount: 0, message: 'Unsubscribed 0 members' });
  });

  it('validates 1..2000 e-mails, scopes the brand, and uses members.store / tags.get', async () => {
    for (const path of ['/members/subscribe', '/members/unsubscribe']) {
      expect((await call('POST', path, { brand_id: 'brand-acme', email: [] })).body.errors).toHaveProperty('email');
      expect(
        (await call('POST', path, { brand_id: 'brand-acme', email: Array(2001).fill('a@example.org') })).status,
      ).toBe(422);
      expect((await call('POST', path, { brand_id: 'brand-acme', email: 'a@example.org' })).status).toBe(422);
      expect((await call('POST', path, { brand_id: 'brand-nope', email: ['a@example.org'] })).status).toBe(404);
      expect((await call('POST', path, { brand_id: 'brand-acme', email: ['bulk-a@example.org'] }, globex)).status).toBe(
        404,
      );
    }
    // The spec gives bulk unsubscribe the ability tags.get; bulk subscribe needs members.store.
    expect(
      (await call('POST', '/members/subscribe', { brand_id: 'brand-acme', email: ['bulk-a@example.org'] }, readonly))
        .status,
    ).toBe(403);
    expect(
      (await call('POST', '/members/unsubscribe', { brand_id: 'brand-acme', email: ['bulk-a@example.org'] }, readonly))
        .status,
    ).toBe(200);
    const storeOnly = await t.auth('acme-admin', ['members.store']);
    expect(
      (await call('POST', '/members/unsubscribe', { brand_id: 'brand-acme', email: ['bulk-a@example.org'] }, storeOnly))
        .status,
    ).toBe(403);
  });
});
