import { randomUUID } from 'node:crypto';
import type { ServerInjectOptions } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { sha256 } from '../lib/hash.js';
import type { Sql } from '../db/pool.js';

let ts: TestServer;
const json = (payload: string) => JSON.parse(payload) as Record<string, any>;

/** Members and passes of both organizations; the fixtures carry none. */
const ids = {
  ada: randomUUID(), // member of brand-acme
  bob: randomUUID(), // member of brand-acme
  cy: randomUUID(), // person of org-acme, not a member of brand-acme
  gus: randomUUID(), // member of brand-globex
};

async function seedPeople(sql: Sql) {
  await sql`INSERT INTO members (id, organization_id, email) VALUES
    (${ids.ada}, 'org-acme', 'ada@example.org'), (${ids.bob}, 'org-acme', 'bob@example.org'),
    (${ids.cy}, 'org-acme', 'cy@example.org'), (${ids.gus}, 'org-globex', 'gus@example.org')`;
  await sql`INSERT INTO brand_members (brand_id, member_id) VALUES
    ('brand-acme', ${ids.ada}), ('brand-acme', ${ids.bob}), ('brand-globex', ${ids.gus})`;
  await sql`INSERT INTO passes (organization_id, brand_id, member_id, kind, coupon_id, storecard_id, pass_code, qr_code) VALUES
    ('org-acme', 'brand-acme', ${ids.ada}, 'coupon', 'coupon-welcome', NULL, 'ACME-ADA-1', 'ACME-ADA-1'),
    ('org-acme', 'brand-acme', ${ids.bob}, 'storecard', NULL, 'card-points', 'ACME-BOB-1', 'ACME-BOB-1'),
    ('org-globex', 'brand-globex', ${ids.gus}, 'coupon', 'coupon-globex', NULL, 'GLOBEX-GUS-1', 'GLOBEX-GUS-1')`;
}

async function createTag(client: string, body: Record<string, unknown>) {
  const res = await ts.inject({ method: 'POST', url: '/tags', headers: await ts.auth(client), payload: body });
  expect(res.statusCode, res.payload).toBe(201);
  return json(res.payload).data as {
    uuid: string;
    external_reference: string;
    brand_id: string;
    tag: string;
    created_at: string;
    updated_at: string;
  };
}

/** A tag of brand-acme, created as acme-admin. */
const acmeTag = (external_reference: string, tag: string) =>
  createTag('acme-admin', { brand_id: 'brand-acme', external_reference, tag });

/** `ts.inject` as acme-admin: the method, the URL and the payload if any. */
const send = async (method: string, url: string, payload?: ServerInjectOptions['payload']) =>
  ts.inject({ method, url, headers: await ts.auth('acme-admin'), ...(payload !== undefined && { payload }) });

let vip: { uuid: string };
let globexVip: { uuid: string };

beforeAll(async () => {
  ts = await createTestServer();
  await seedPeople(ts.db.sql);
  vip = await acmeTag('vip', 'VIP customers');
  // The same reference in another organization is a different tag.
  globexVip = await createTag('globex-admin', {
    brand_id: 'brand-globex',
    external_reference: 'vip',
    tag: 'Globex VIP',
  });
});
afterAll(() => ts?.close());

describe('GET /tags', () => {
  it('lists the tags of the token’s organizations only, oldest first, with RFC 3339 timestamps', async () => {
    const late = await acmeTag('late', 'Late');
    const res = await send('GET', '/tags');
    expect(res.statusCode).toBe(200);
    const body = json(res.payload);
    expect(body.success).toBe(true);
    const refs = body.data.map((t: { external_reference: string }) => t.external_reference);
    expect(refs.indexOf('vip')).toBeLessThan(refs.indexOf('late'));
    expect(body.data.every((t: { brand_id: string }) => t.brand_id === 'brand-acme')).toBe(true);
    expect(body.data.find((t: { uuid: string }) => t.uuid === late.uuid).created_at).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );

    const globex = json(
      (await ts.inject({ method: 'GET', url: '/tags', headers: await ts.auth('globex-admin') })).payload,
    );
    expect(globex.data.map((t: { uuid: string }) => t.uuid)).toEqual([globexVip.uuid]);
  });

  it('lists the tags of every organization of a token with several, oldest first', async () => {
    await ts.db.sql`INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
      VALUES ('tags-multi', ${sha256('tags-multi-secret')}, '{org-acme,org-globex}', '{tags.get}')`;
    const res = await ts.inject({ method: 'GET', url: '/tags', headers: await ts.auth('tags-multi') });
    expect(res.statusCode).toBe(200);
    const uuids = json(res.payload).data.map((t: { uuid: string }) => t.uuid);
    expect(uuids).toContain(globexVip.uuid);
    expect(uuids.indexOf(vip.uuid)).toBeLessThan(uuids.indexOf(globexVip.uuid));
  });

  it('lists each tag exactly as POST and PUT answer it, with any characters in tag and reference', async () => {
    const res = await send('POST', '/tags', {
      brand_id: 'brand-acme',
      external_reference: 'odd "ref" \\ </script>',
      tag: 'Line\nbreak\ttab "quotes" \\ ü € 😀 \u0001',
    });
    const created = json(res.payload).data;
    const listed = () => send('GET', '/tags').then((r) => r.payload);
    expect((await listed()).includes(JSON.stringify(created))).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    const updated = json((await send('PUT', '/tags', { tag_id: created.uuid, tag: 'Renamed ✓' })).payload).data;
    expect(updated.updated_at).not.toBe(created.updated_at);
    const after = await listed();
    expect(after.includes(JSON.stringify(updated))).toBe(true);
    expect(after.includes(JSON.stringify(created))).toBe(false);
  });
});

describe('POST /tags', () => {
  it('creates a tag (201) with the fields sent', async () => {
    const tag = await acmeTag('new-1', 'New one');
    expect(tag).toMatchObject({ brand_id: 'brand-acme', external_reference: 'new-1', tag: 'New one' });
    expect(tag.created_at).toBe(tag.updated_at);
  });

  it('answers the Tag object exactly as GET /tags lists it (one builder: the api_json trigger)', async () => {
    const tag = await acmeTag('same-1', 'Quote " and \u00e9');
    const put = await send('PUT', '/tags', { tag_id: tag.uuid, tag: 'Put \\ back' });
    const list = json((await send('GET', '/tags')).payload).data;
    const listed = list.find((t: { uuid: string }) => t.uuid === tag.uuid);
    expect(json(put.payload).data).toStrictEqual(listed);
    expect(Object.keys(tag)).toEqual(['tag', 'external_reference', 'uuid', 'created_at', 'updated_at', 'brand_id']);
    expect(tag.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('answers 422 on external_reference when the organization already uses it', async () => {
    const res = await send('POST', '/tags', { brand_id: 'brand-acme', external_reference: 'vip', tag: 'Again' });
    expect(res.statusCode).toBe(422);
    expect(json(res.payload)).toMatchObject({
      error: 'validation_failed',
      errors: { external_reference: [expect.any(String)] },
    });
  });

  it('answers 404 for an unknown or foreign brand', async () => {
    for (const brand_id of ['brand-nope', 'brand-globex']) {
      const res = await send('POST', '/tags', { brand_id, external_reference: `x-${brand_id}`, tag: 'X' });
      expect(res.statusCode).toBe(404);
      expect(json(res.payload)).toEqual({ message: 'Brand not found.', error: 'not_found' });
    }
  });
});

describe('PUT /tags', () => {
  it('changes only the fields sent and moves updated_at', async () => {
    const tag = await acmeTag('put-1', 'Before');
    await new Promise((r) => setTimeout(r, 5));
    const res = await send('PUT', '/tags', { tag_id: tag.uuid, tag: 'After' });
    expect(res.statusCode).toBe(200);
    const data = json(res.payload).data;
    expect(data).toMatchObject({
      uuid: tag.uuid,
      tag: 'After',
      external_reference: 'put-1',
      brand_id: 'brand-acme',
      created_at: tag.created_at,
    });
    expect(Date.parse(data.updated_at)).toBeGreaterThan(Date.parse(tag.updated_at));

    const ref = await send('PUT', '/tags', { tag_id: tag.uuid, brand_id: 'brand-acme', external_reference: 'put-1b' });
    expect(json(ref.payload).data).toMatchObject({ tag: 'After', external_reference: 'put-1b' });
  });

  it('answers 422 when the new external_reference is taken', async () => {
    const tag = await acmeTag('put-2', 'Two');
    const res = await send('PUT', '/tags', { tag_id: tag.uuid, external_reference: 'vip' });
    expect(res.statusCode).toBe(422);
    expect(json(res.payload).errors).toHaveProperty('external_reference');
  });

  it('takes the uuid only (an external_reference is a 422) and a brand_id other than the tag’s is a 404', async () => {
    const byRef = await send('PUT', '/tags', { tag_id: 'vip', tag: 'X' });
    expect(byRef.statusCode).toBe(422);
    expect(json(byRef.payload).errors).toHaveProperty('tag_id');
    const otherBrand = await send('PUT', '/tags', { tag_id: vip.uuid, brand_id: 'brand-globex', tag: 'X' });
    expect(otherBrand.statusCode).toBe(404);
    const unknown = await send('PUT', '/tags', { tag_id: randomUUID(), tag: 'X' });
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown.payload)).toEqual({ message: 'Tag not found.', error: 'not_found' });
  });
});

describe('DELETE /tags', () => {
  it('removes the tag with its member and pass links (body form), then 404s', async () => {
    const tag = await acmeTag('del-1', 'Doomed');
    await send('POST', '/tags/members', { tag_id: tag.uuid, member_id: ids.ada });
    await send('POST', '/tags/passes', { tag_id: tag.uuid, pass_code: 'ACME-ADA-1' });
    const res = await send('DELETE', '/tags', { tag_id: tag.uuid, brand_id: 'brand-acme' });
    expect(res.statusCode).toBe(200);
    expect(json(res.payload)).toEqual({ success: true, message: 'Tag removed' });
    const [links] = await ts.db
      .sql`SELECT (SELECT count(*) FROM tag_members WHERE tag_id = ${tag.uuid}) + (SELECT count(*) FROM tag_passes WHERE tag_id = ${tag.uuid}) AS n`;
    expect(Number(links!.n)).toBe(0);
    const [member] = await ts.db.sql`SELECT 1 FROM members WHERE id = ${ids.ada}`;
    expect(member).toBeDefined();
    const again = await send('DELETE', '/tags', { tag_id: tag.uuid });
    expect(again.statusCode).toBe(404);
  });

  it('accepts the parameters as a query string too', async () => {
    const tag = await acmeTag('del-2', 'Doomed too');
    const res = await send('DELETE', `/tags?tag_id=${tag.uuid}&brand_id=brand-acme`);
    expect(res.statusCode).toBe(200);
    expect(json(res.payload).message).toBe('Tag removed');
  });

  it('answers 422 naming tag_id when it is missing', async () => {
    const res = await send('DELETE', '/tags');
    expect(res.statusCode).toBe(422);
    expect(json(res.payload).errors).toHaveProperty('tag_id');
  });
});

describe('tag passes', () => {
  it('adds by uuid or external_reference, lists, removes; adding twice keeps one link', async () => {
    const tag = await acmeTag('passes-1', 'Passes');
    for (const [tag_id, pass_code] of [
      [tag.uuid, 'ACME-ADA-1'],
      ['passes-1', 'ACME-BOB-1'],
      ['passes-1', 'ACME-ADA-1'],
    ]) {
      const res = await send('POST', '/tags/passes', { tag_id, pass_code, brand_id: 'brand-acme' });
      expect(res.statusCode).toBe(200);
      expect(json(res.payload)).toEqual({ success: true, message: 'Pass added to tag' });
    }
    const list = await send('GET', '/tags/passes?tag_id=passes-1&brand_id=brand-acme');
    expect(json(list.payload)).toEqual({
      success: true,
      data: [{ pass_code: 'ACME-ADA-1' }, { pass_code: 'ACME-BOB-1' }],
    });

    const removed = await send('DELETE', '/tags/passes', { tag_id: 'passes-1', pass_code: 'ACME-ADA-1' });
    expect(json(removed.payload)).toEqual({ success: true, message: 'Pass removed from tag' });
    const viaQuery = await send('DELETE', `/tags/passes?tag_id=${tag.uuid}&pass_code=ACME-BOB-1`);
    expect(viaQuery.statusCode).toBe(200);
    const notOnTag = await send('DELETE', '/tags/passes', { tag_id: 'passes-1', pass_code: 'ACME-BOB-1' });
    expect(notOnTag.statusCode).toBe(200);
    const empty = await send('GET', '/tags/passes', JSON.stringify({ tag_id: 'passes-1', brand_id: 'brand-acme' }));
    expect(json(empty.payload)).toEqual({ success: true, data: [] });
  });

  it('answers 404 for an unknown pass code, a foreign pass and a brand_id that is not the tag’s', async () => {
    for (const payload of [
      { tag_id: 'vip', pass_code: 'NOPE' },
      { tag_id: 'vip', pass_code: 'GLOBEX-GUS-1' },
      { tag_id: 'vip', pass_code: 'ACME-ADA-1', brand_id: 'brand-globex' },
      { tag_id: 'no-such-tag', pass_code: 'ACME-ADA-1' },
    ]) {
      const res = await send('POST', '/tags/passes', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(404);
    }
    const list = await send('GET', '/tags/passes?tag_id=vip&brand_id=brand-globex');
    expect(list.statusCode).toBe(404);
  });
});

describe('tag members', () => {
  it('adds one member by tag uuid or reference, lists {identifier, email} in order, removes', async () => {
    await acmeTag('members-1', 'Members');
    for (const member_id of [ids.bob, ids.ada, ids.bob]) {
      const res = await send('POST', '/tags/members', { tag_id: 'members-1', member_id, brand_id: 'brand-acme' });
      expect(res.statusCode).toBe(200);
      expect(json(res.payload)).toEqual({ success: true, message: 'Member added to tag' });
    }
    const list = await send('GET', '/tags/members?tag_id=members-1&brand_id=brand-acme');
    expect(json(list.payload)).toEqual({
      success: true,
      data: [
        { identifier: ids.bob, email: 'bob@example.org' },
        { identifier: ids.ada, email: 'ada@example.org' },
      ],
    });

    const removed = await send('DELETE', '/tags/members', { tag_id: 'members-1', member_id: ids.bob });
    expect(json(removed.payload)).toEqual({ success: true, message: 'Member removed from tag' });
    const viaQuery = await send('DELETE', `/tags/members?tag_id=members-1&member_id=${ids.ada}&brand_id=brand-acme`);
    expect(viaQuery.statusCode).toBe(200);
    const viaBody = await send('GET', '/tags/members', JSON.stringify({ tag_id: 'members-1', brand_id: 'brand-acme' }));
    expect(json(viaBody.payload).data).toEqual([]);
  });

  it('leaves out members who left the brand', async () => {
    const sql = ts.db.sql;
    const leaver = randomUUID();
    await sql`INSERT INTO members (id, organization_id, email) VALUES (${leaver}, 'org-acme', 'leaver@example.org')`;
    await sql`INSERT INTO brand_members (brand_id, member_id) VALUES ('brand-acme', ${leaver})`;
    await acmeTag('members-2', 'Leavers');
    await send('POST', '/tags/members', { tag_id: 'members-2', member_id: leaver });
    await sql`DELETE FROM brand_members WHERE member_id = ${leaver}`;
    const list = await send('GET', '/tags/members?tag_id=members-2&brand_id=brand-acme');
    expect(json(list.payload).data).toEqual([]);
    // ...and they can still be taken off the tag.
    const removed = await send('DELETE', '/tags/members', { tag_id: 'members-2', member_id: leaver });
    expect(removed.statusCode).toBe(200);
    const [row] = await sql`SELECT count(*)::int AS n FROM tag_members WHERE member_id = ${leaver}`;
    expect(row!.n).toBe(0);
  });

  it('answers 404 for an unknown member, a foreign member and a person who is not a member of the brand', async () => {
    for (const member_id of [randomUUID(), ids.gus, ids.cy]) {
      const res = await send('POST', '/tags/members', { tag_id: 'vip', member_id });
      expect(res.statusCode).toBe(404);
      expect(json(res.payload)).toEqual({ message: 'Member not found.', error: 'not_found' });
    }
    const foreignRemove = await send('DELETE', '/tags/members', { tag_id: 'vip', member_id: ids.gus });
    expect(foreignRemove.statusCode).toBe(404);
  });
});

describe('POST /tags/members/bulk', () => {
  it('adds members of the brand, skips the rest silently, and is safe to repeat', async () => {
    await acmeTag('bulk-1', 'Bulk');
    const users = [ids.ada, ids.bob, ids.ada, ids.cy, ids.gus, randomUUID()];
    const first = await send('POST', '/tags/members/bulk', { brand_id: 'brand-acme', tag_id: 'bulk-1', users });
    expect(first.statusCode).toBe(200);
    expect(json(first.payload)).toEqual({ success: true, message: 'Added 2 members to tag' });
    const again = await send('POST', '/tags/members/bulk', { brand_id: 'brand-acme', tag_id: 'bulk-1', users });
    expect(json(again.payload)).toEqual({ success: true, message: 'Added 0 members to tag' });
    const list = json((await send('GET', '/tags/members?tag_id=bulk-1&brand_id=brand-acme')).payload);
    expect(list.data.map((m: { identifier: string }) => m.identifier).sort()).toEqual([ids.ada, ids.bob].sort());
  });

  it('takes 2000 users in one call', async () => {
    const tag = await acmeTag('bulk-2000', 'Big');
    const users = Array.from({ length: 1999 }, () => randomUUID()).concat(ids.ada);
    const res = await send('POST', '/tags/members/bulk', { brand_id: 'brand-acme', tag_id: tag.uuid, users });
    expect(json(res.payload)).toEqual({ success: true, message: 'Added 1 members to tag' });
  });

  it('answers 422 for users empty, over 2000, or holding a non-UUID (named users.N)', async () => {
    const cases: [unknown, string][] = [
      [[], 'users'],
      [Array.from({ length: 2001 }, () => randomUUID()), 'users'],
      [[ids.ada, 'nope'], 'users.1'],
      ['not-a-list', 'users'],
    ];
    for (const [users, field] of cases) {
      const res = await send('POST', '/tags/members/bulk', { brand_id: 'brand-acme', tag_id: 'vip', users });
      expect(res.statusCode).toBe(422);
      expect(json(res.payload).errors).toHaveProperty([field]);
    }
  });

  it('answers 404 for an unknown or foreign brand or tag, and a tag of another brand', async () => {
    for (const [brand_id, tag_id] of [
      ['brand-nope', 'vip'],
      ['brand-globex', 'vip'],
      ['brand-acme', 'nope'],
      ['brand-acme', globexVip.uuid],
    ]) {
      const res = await send('POST', '/tags/members/bulk', { brand_id, tag_id, users: [ids.ada] });
      expect(res.statusCode, `${brand_id} ${tag_id}`).toBe(404);
    }
  });
});

/** One valid acme request per operation: what a foreign or under-privileged token tries. */
const operations = (): { name: string; ability: 'tags.get' | 'tags.store'; request: ServerInjectOptions }[] => [
  { name: 'listTags', ability: 'tags.get', request: { method: 'GET', url: '/tags' } },
  {
    name: 'createTag',
    ability: 'tags.store',
    request: {
      method: 'POST',
      url: '/tags',
      payload: { brand_id: 'brand-acme', external_reference: `c-${randomUUID()}`, tag: 'C' },
    },
  },
  {
    name: 'updateTag',
    ability: 'tags.store',
    request: { method: 'PUT', url: '/tags', payload: { tag_id: vip.uuid, tag: 'Hijacked' } },
  },
  {
    name: 'deleteTag',
    ability: 'tags.store',
    request: { method: 'DELETE', url: '/tags', payload: { tag_id: vip.uuid } },
  },
  {
    name: 'listTagPasses',
    ability: 'tags.get',
    request: { method: 'GET', url: `/tags/passes?tag_id=${vip.uuid}&brand_id=brand-acme` },
  },
  {
    name: 'addPassToTag',
    ability: 'tags.store',
    request: { method: 'POST', url: '/tags/passes', payload: { tag_id: vip.uuid, pass_code: 'ACME-ADA-1' } },
  },
  {
    name: 'removePassFromTag',
    ability: 'tags.store',
    request: { method: 'DELETE', url: '/tags/passes', payload: { tag_id: vip.uuid, pass_code: 'ACME-ADA-1' } },
  },
  {
    name: 'listTagMembers',
    ability: 'tags.get',
    request: { method: 'GET', url: `/tags/members?tag_id=${vip.uuid}&brand_id=brand-acme` },
  },
  {
    name: 'addMemberToTag',
    ability: 'tags.store',
    request: { method: 'POST', url: '/tags/members', payload: { tag_id: vip.uuid, member_id: ids.ada } },
  },
  {
    name: 'removeMemberFromTag',
    ability: 'tags.store',
    request: { method: 'DELETE', url: '/tags/members', payload: { tag_id: vip.uuid, member_id: ids.ada } },
  },
  {
    name: 'addMembersToTagBulk',
    ability: 'tags.store',
    request: {
      method: 'POST',
      url: '/tags/members/bulk',
      payload: { brand_id: 'brand-acme', tag_id: vip.uuid, users: [ids.ada] },
    },
  },
];

describe('every tag operation', () => {
  it('covers all 11 operations', () => {
    expect(operations()).toHaveLength(11);
  });

  it('answers 403 to a token without the ability, 401 without a token; nothing changes', async () => {
    for (const op of operations()) {
      const lacking = op.ability === 'tags.get' ? ['tags.store', 'members.get'] : ['tags.get', 'members.store'];
      for (const headers of [
        await ts.auth('acme-admin', lacking),
        ...(op.ability === 'tags.store' ? [await ts.auth('acme-readonly')] : []),
      ]) {
        const res = await ts.inject({ ...op.request, headers });
        expect(res.statusCode, op.name).toBe(403);
        expect(json(res.payload).error).toBe('forbidden');
      }
      const anonymous = await ts.inject(op.request);
      expect(anonymous.statusCode, op.name).toBe(401);
      expect(json(anonymous.payload)).toEqual({ message: 'Unauthenticated.', error: 'unauthenticated' });
    }
    const [tag] = await ts.db.sql`SELECT tag FROM tags WHERE id = ${vip.uuid}`;
    expect(tag!.tag).toBe('VIP customers');
  });

  it('answers 404 to another organization’s token, exactly as for an unknown id; nothing changes', async () => {
    const headers = await ts.auth('globex-admin');
    for (const op of operations()) {
      if (op.name === 'listTags') continue; // no id to look up; covered by the listing test
      const res = await ts.inject({ ...op.request, headers });
      expect(res.statusCode, op.name).toBe(404);
      expect(json(res.payload).error, op.name).toBe('not_found');
    }
    const [tag] = await ts.db.sql`SELECT tag FROM tags WHERE id = ${vip.uuid}`;
    expect(tag!.tag).toBe('VIP customers');
    const [links] = await ts.db.sql`SELECT count(*)::int AS n FROM tag_members WHERE tag_id = ${vip.uuid}`;
    expect(links!.n).toBe(0);
  });
});

describe('bad input on tag routes: a 4xx JSON error, never a 5xx', () => {
  it('malformed JSON is a 400 bad_request', async () => {
    const res = await ts.inject({
      method: 'POST',
      url: '/tags',
      headers: { ...(await ts.auth('acme-admin')), 'content-type': 'application/json' },
      payload: '{"brand_id": "brand-acme",',
    });
    expect(res.statusCode).toBe(400);
    expect(json(res.payload)).toEqual({ message: 'The request body is not valid JSON.', error: 'bad_request' });
    const get = await ts.inject({
      method: 'GET',
      url: '/tags/passes',
      headers: { ...(await ts.auth('acme-admin')), 'content-type': 'application/json' },
      payload: '{tag_id',
    });
    expect(get.statusCode).toBe(400);
    expect(json(get.payload).error).toBe('bad_request');
  });

  it('a form or text body is a 415 unsupported_media_type', async () => {
    for (const [type, payload] of [
      ['application/x-www-form-urlencoded', 'brand_id=brand-acme&external_reference=f&tag=F'],
      ['text/plain', 'hello'],
    ]) {
      const res = await ts.inject({
        method: 'POST',
        url: '/tags',
        headers: { ...(await ts.auth('acme-admin')), 'content-type': type! },
        payload,
      });
      expect(res.statusCode).toBe(415);
      expect(json(res.payload)).toEqual({
        message: expect.stringContaining('application/json'),
        error: 'unsupported_media_type',
      });
    }
    const [row] = await ts.db.sql`SELECT count(*)::int AS n FROM tags WHERE external_reference = 'f'`;
    expect(row!.n).toBe(0);
  });

  it('an oversized body is a 413 payload_too_large', async () => {
    const res = await send(
      'POST',
      '/tags/members/bulk',
      JSON.stringify({ brand_id: 'brand-acme', tag_id: 'vip', users: [], pad: 'x'.repeat(6 * 1024 * 1024) }),
    );
    expect(res.statusCode).toBe(413);
    expect(json(res.payload).error).toBe('payload_too_large');
  });

  it('wrong types name each field', async () => {
    const res = await send('POST', '/tags', { brand_id: 5, external_reference: null, tag: ['x'] });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(json(res.payload).errors).sort()).toEqual(['brand_id', 'external_reference', 'tag']);
    const empty = await send('POST', '/tags', { brand_id: 'brand-acme', external_reference: '', tag: 'x'.repeat(192) });
    expect(Object.keys(json(empty.payload).errors).sort()).toEqual(['external_reference', 'tag']);
    const array = await send('POST', '/tags/members', JSON.stringify([1, 2]));
    expect(array.statusCode).toBe(422);
    const member = await send('POST', '/tags/members', { tag_id: 'vip', member_id: 'not-a-uuid' });
    expect(json(member.payload).errors).toHaveProperty('member_id');
    const missing = await send('GET', '/tags/members?tag_id=vip');
    expect(missing.statusCode).toBe(422);
    expect(json(missing.payload).errors).toHaveProperty('brand_id');
    const twice = await send('GET', '/tags/passes?tag_id=vip&tag_id=other&brand_id=brand-acme');
    expect(twice.statusCode).toBe(422);
    expect(json(twice.payload).errors).toHaveProperty('tag_id');
  });
});
