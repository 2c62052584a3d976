import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { unixSocketOf, type Sql } from '../../db/pool.js';
import {
  claimIdempotencyKey,
  extendIdempotencyClaim,
  parseIdempotencyKey,
  purgeExpiredIdempotencyKeys,
  releaseIdempotencyKey,
  requestHash,
  scopeHash,
  storeIdempotentResponse,
} from './idempotency.js';
import { canonicalJson } from '../../lib/hash.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

const newScope = () => randomBytes(32);
const req = (body: unknown, query = '') => requestHash(body, query);
const claim = (scope: Buffer, request: Buffer, sql: Sql = db.sql) =>
  claimIdempotencyKey(sql, { scope, request, lockSeconds: 60 });
const stored = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: '{"success":true}',
};

describe('parseIdempotencyKey', () => {
  it('takes the key bare or as an IETF quoted string, quotes not counted', () => {
    expect(parseIdempotencyKey('abc')).toBe('abc');
    expect(parseIdempotencyKey('"abc"')).toBe('abc');
    expect(parseIdempotencyKey('x'.repeat(255))).toHaveLength(255);
    expect(parseIdempotencyKey(`"${'x'.repeat(255)}"`)).toHaveLength(255);
  });

  it.each([[''], ['""'], ['x'.repeat(256)], [`"${'x'.repeat(256)}"`], ['a"b'], ['"abc'], ['"a"b"']])(
    'rejects %j as idempotency_key_invalid',
    (header) => {
      expect(() => parseIdempotencyKey(header)).toThrow(
        expect.objectContaining({ kind: 'bad_request', code: 'idempotency_key_invalid' }),
      );
    },
  );
});

describe('hashes', () => {
  it('scope the key to token, method and path; a request is its body and query string', () => {
    const base = { tokenHash: 't', method: 'post', path: '/tags', key: 'k' };
    expect(scopeHash(base)).toEqual(scopeHash({ ...base, method: 'POST' }));
    for (const change of [{ tokenHash: 'u' }, { method: 'PUT' }, { path: '/tags/members' }, { key: 'K' }]) {
      expect(scopeHash({ ...base, ...change })).not.toEqual(scopeHash(base));
    }
    expect(req({ a: 1 })).toEqual(req({ a: 1 }));
    expect(req({ a: 1 })).not.toEqual(req({ a: 2 }));
    expect(req({ a: 1 }, '?x=1')).not.toEqual(req({ a: 1 }));
  });

  it('fingerprint a body as canonical JSON: key order does not matter at any depth, array order does', () => {
    expect(req({ a: 1, b: { c: [1, { d: 1, e: 2 }], f: null } })).toEqual(
      req({ b: { f: null, c: [1, { e: 2, d: 1 }] }, a: 1 }),
    );
    expect(req({ users: ['x', 'y'] })).not.toEqual(req({ users: ['y', 'x'] }));
    // Values keep their JSON types and meaning: no key or value is lost or merged.
    expect(req({ a: '1' })).not.toEqual(req({ a: 1 }));
    expect(req({ a: { b: 1 } })).not.toEqual(req({ a: { B: 1 } }));
    expect(req({ 'a,b': 1 })).not.toEqual(req({ a: 1, b: 1 }));
    expect(req(null)).toEqual(req(undefined));
  });
});

describe('canonicalJson', () => {
  it('is RFC 8785 (JCS) for what JSON.parse returns: keys sorted by UTF-16 code units, no spacing', () => {
    expect(
      canonicalJson(JSON.parse('{"b": [3, 1, {"z": true, "y": null}], "a": "x", "10": 1, "9": 2, "é": 0, "Z": -0.5}')),
    ).toBe('{"10":1,"9":2,"Z":-0.5,"a":"x","b":[3,1,{"y":null,"z":true}],"é":0}');
    // RFC 8785 §3.2.3's sorting example: code units, so U+1F600 (surrogates D83D DE00) sorts before U+FB33.
    expect(canonicalJson({ '\ufb33': 1, '\u{1f600}': 2, '\r': 3, '1': 4 })).toBe(
      '{"\\r":3,"1":4,"\u{1f600}":2,"\ufb33":1}',
    );
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson([undefined, () => 1])).toBe('[null,null]');
    expect(canonicalJson({ a: undefined, b: 1, d: new Date(0) })).toBe('{"b":1,"d":"1970-01-01T00:00:00.000Z"}');
  });

  it('writes a value nested 100,000 levels deep (objects and arrays) without a stack overflow', () => {
    const depth = 100_000;
    const deepObject = `${'{"b":[1,{"a":'.repeat(depth)}null${'}]}'.repeat(depth)}`;
    expect(canonicalJson(JSON.parse(deepObject))).toBe(deepObject);
    expect(canonicalJson(JSON.parse(`${'[{"z":1,"y":[]},'.repeat(depth)}0${']'.repeat(depth)}`))).toBe(
      `${'[{"y":[],"z":1},'.repeat(depth)}0${']'.repeat(depth)}`,
    );
  });
});

describe('claimIdempotencyKey', () => {
  it('claims a new key; the same request while it runs is in progress; another request is a reuse', async () => {
    const scope = newScope();
    expect(await claim(scope, req({ a: 1 }))).toMatchObject({ kind: 'claimed' });
    expect(await claim(scope, req({ a: 1 }))).toEqual({ kind: 'in_progress' });
    expect(await claim(scope, req({ a: 2 }))).toEqual({ kind: 'reuse' });
  });

  it('replays a stored response; a released key can be claimed again', async () => {
    const scope = newScope();
    await claim(scope, req({ a: 1 }));
    await storeIdempotentResponse(db.sql, scope, stored);
    expect(await claim(scope, req({ a: 1 }))).toEqual({ kind: 'replay', response: stored });
    expect(await claim(scope, req({ a: 2 }))).toEqual({ kind: 'reuse' });

    const other = newScope();
    await claim(other, req({ a: 1 }));
    await releaseIdempotencyKey(db.sql, other);
    expect(await claim(other, req({ a: 2 }))).toMatchObject({ kind: 'claimed' });
  });

  it('costs one statement on a replay (and on a first claim)', async () => {
    let statements = 0;
    const counting = postgres(db.url, {
      ...unixSocketOf(db.url),
      max: 1,
      onnotice: () => {},
      debug: () => void statements++,
    }) as unknown as Sql;
    try {
      await counting`SELECT 1`; // the connection's own start-up queries are not ours
      statements = 0;
      const scope = newScope();
      await claim(scope, req({ a: 1 }), counting);
      expect(statements).toBe(1);
      await storeIdempotentResponse(db.sql, scope, stored);
      statements = 0;
      expect((await claim(scope, req({ a: 1 }), counting)).kind).toBe('replay');
      expect(statements).toBe(1);
    } finally {
      await counting.end();
    }
  });

  it('lets exactly one of many simultaneous first requests claim the key', async () => {
    const scope = newScope();
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => claim(scope, req({ a: 1 }))));
    expect(outcomes.filter((o) => o.kind === 'claimed')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'in_progress')).toHaveLength(11);
  });

  it('takes over a claim abandoned by a crash once locked_until has passed', async () => {
    const scope = newScope();
    await claim(scope, req({ a: 1 }));
    await db.sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE scope_hash = ${scope}`;
    expect(await claim(scope, req({ a: 1 }))).toMatchObject({ kind: 'claimed' });
    expect(await claim(scope, req({ a: 1 }))).toEqual({ kind: 'in_progress' });
  });

  it('extends only its own live claim: not one another request took over, not an answered one', async () => {
    const scope = newScope();
    const first = await claim(scope, req({ a: 1 }));
    if (first.kind !== 'claimed') throw new Error(first.kind);
    await db.sql`UPDATE idempotency_keys SET locked_until = now() + interval '1 second' WHERE scope_hash = ${scope}`;
    expect(await extendIdempotencyClaim(db.sql, scope, first.claimedAt, 600)).toBe(true);
    expect(
      (
        await db.sql`SELECT locked_until > now() + interval '500 seconds' AS far FROM idempotency_keys WHERE scope_hash = ${scope}`
      )[0]!.far,
    ).toBe(true);

    await db.sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE scope_hash = ${scope}`;
    const second = await claim(scope, req({ a: 1 })); // taken over: the first request's heartbeat must not keep it
    if (second.kind !== 'claimed') throw new Error(second.kind);
    expect(second.claimedAt).not.toBe(first.claimedAt);
    expect(await extendIdempotencyClaim(db.sql, scope, first.claimedAt, 600)).toBe(false);
    expect(await extendIdempotencyClaim(db.sql, scope, second.claimedAt, 600)).toBe(true);
    await storeIdempotentResponse(db.sql, scope, stored);
    expect(await extendIdempotencyClaim(db.sql, scope, second.claimedAt, 600)).toBe(false);
  });

  it('treats a stored response past its 24 hours as gone', async () => {
    const scope = newScope();
    await claim(scope, req({ a: 1 }));
    await storeIdempotentResponse(db.sql, scope, stored);
    const [row] = await db.sql<
      { hours: number }[]
    >`SELECT round(extract(epoch FROM expires_at - now()) / 3600)::int AS hours FROM idempotency_keys WHERE scope_hash = ${scope}`;
    expect(row!.hours).toBe(24);
    await db.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE scope_hash = ${scope}`;
    expect(await claim(scope, req({ a: 2 }))).toMatchObject({ kind: 'claimed' });
  });
});

describe('purgeExpiredIdempotencyKeys', () => {
  it('deletes expired keys and keeps live ones', async () => {
    const live = newScope();
    const old = newScope();
    await claim(live, req(1));
    await claim(old, req(1));
    await db.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 minute' WHERE scope_hash = ${old}`;
    expect(await purgeExpiredIdempotencyKeys(db.sql)).toBeGreaterThanOrEqual(1);
    const rows = await db.sql`SELECT scope_hash FROM idempotency_keys WHERE scope_hash IN (${live}, ${old})`;
    expect(rows.map((r) => Buffer.from(r.scope_hash as Buffer))).toEqual([live]);
  });
});
