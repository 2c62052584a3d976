import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deref, listOperations, loadOpenApi, type OpenApiDocument, type Operation } from '../lib/openapi.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

/**
 * Input rules at the edge (openapi.yaml, "Input rules"): NUL, unpaired surrogates, integers the
 * database cannot hold and dates outside 0001-9999 answer 4xx naming the field, never 5xx, and
 * write nothing. First the cases that once reached PostgreSQL and answered 500, then every string
 * field of every operation, generated from the document.
 */
let t: TestServer;
let admin: { authorization: string };
let till: { authorization: string };
let memberId: string;
let tagUuid: string;
beforeAll(async () => {
  t = await createTestServer();
  [admin, till] = await Promise.all([t.auth('acme-admin'), t.auth('acme-pos-1')]);
  const member = await t.inject({
    method: 'POST',
    url: '/members',
    headers: admin,
    payload: { brand_id: 'brand-acme', email: 'edge@example.org' },
  });
  memberId = JSON.parse(member.payload).member_id;
  const tag = await t.inject({
    method: 'POST',
    url: '/tags',
    headers: admin,
    payload: { brand_id: 'brand-acme', external_reference: 'edge', tag: 'Edge' },
  });
  tagUuid = JSON.parse(tag.payload).data.uuid;
});
afterAll(() => t.close());

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';
const PROMOTION = '0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10';
const address = {
  first_name: 'Ann',
  last_name: 'Lee',
  address1: 'Main 1',
  city: 'Utrecht',
  country: 'NL',
  zip: '1234AB',
};
const order = (patch: Record<string, unknown>) => ({
  firstname: 'Ann',
  lastname: 'Lee',
  email: 'ann@example.org',
  promotion_identifier: PROMOTION,
  organization_identifier: 'org-acme',
  off_peak_sale: false,
  products: [{ product_id: 2, quantity: 1 }],
  shipping_address: address,
  ...patch,
});

/** The field names a 4xx body gives: `errors` keys (generic and webshop 422), or the OAuth description. */
function namedFields(body: Record<string, unknown>): string {
  if (body.errors && typeof body.errors === 'object' && !Array.isArray(body.errors))
    return Object.keys(body.errors).join(' ');
  return String(body.error_description ?? body.message ?? '');
}

/** Row counts of every table an accepted request could write (tokens, rate-limit counters and the request log, which records every request, aside). */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = await t.db.sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT IN ('rate_limits', 'access_tokens', 'idempotency_keys', 'request_logs')`;
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${t.db.sql(name)}`;
    counts[name] = row!.n;
  }
  return counts;
}

/** `payload` is a function where it names the member or tag that beforeAll makes. */
type Case = {
  name: string;
  method: string;
  url: () => string;
  payload?: unknown | (() => unknown);
  form?: boolean;
  as?: 'till' | 'none';
  field: string;
  status?: number;
};
const cases: Case[] = [
  {
    name: 'NUL in the OAuth client_id',
    method: 'POST',
    url: () => '/oauth/token',
    as: 'none',
    form: true,
    payload: 'grant_type=client_credentials&client_id=acme%00admin&client_secret=x',
    field: 'client_id',
    status: 400,
  },
  {
    name: 'NUL in a tag label',
    method: 'POST',
    url: () => '/tags',
    payload: { brand_id: 'brand-acme', external_reference: 'nul', tag: NUL },
    field: 'tag',
  },
  {
    name: 'NUL in a tag update',
    method: 'PUT',
    url: () => '/tags',
    payload: () => ({ tag_id: tagUuid, brand_id: 'brand-acme', external_reference: NUL }),
    field: 'external_reference',
  },
  {
    name: 'NUL in a tag delete brand_id',
    method: 'DELETE',
    url: () => '/tags',
    payload: () => ({ tag_id: tagUuid, brand_id: NUL }),
    field: 'brand_id',
  },
  {
    name: 'NUL in a pass code added to a tag',
    method: 'POST',
    url: () => '/tags/passes',
    payload: { tag_id: 'edge', brand_id: 'brand-acme', pass_code: NUL },
    field: 'pass_code',
  },
  {
    name: 'NUL in the tag_id query of tag passes',
    method: 'GET',
    url: () => '/tags/passes?brand_id=brand-acme&tag_id=edge%00',
    field: 'tag_id',
  },
  {
    name: 'a lone surrogate in the JSON body of a GET',
    method: 'GET',
    url: () => '/tags/members',
    payload: { brand_id: 'brand-acme', tag_id: LONE },
    field: 'tag_id',
  },
  {
    name: 'NUL in the tag_id of a tag member',
    method: 'POST',
    url: () => '/tags/members',
    payload: () => ({ tag_id: NUL, brand_id: 'brand-acme', member_id: memberId }),
    field: 'tag_id',
  },
  {
    name: 'NUL in the tag_id of a bulk tag add',
    method: 'POST',
    url: () => '/tags/members/bulk',
    payload: () => ({ tag_id: NUL, brand_id: 'brand-acme', users: [memberId] }),
    field: 'tag_id',
  },
  {
    name: 'NUL in the tag path of voucher issuing',
    method: 'POST',
    url: () => '/tags/edge%00/vouchers',
    payload: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' },
    field: 'id',
  },
  {
    name: 'NUL in the coupon_id of voucher issuing',
    method: 'POST',
    url: () => '/tags/edge/vouchers',
    payload: { brand_id: 'brand-acme', coupon_id: NUL },
    field: 'coupon_id',
  },
  {
    name: 'NUL in the brand_id query of voucher status',
    method: 'GET',
    url: () => `/tags/edge/vouchers/${memberId}?brand_id=brand-acme%00`,
    field: 'brand_id',
  },
  {
    name: 'year 0000 in a voucher expiration_date',
    method: 'POST',
    url: () => '/tags/edge/vouchers',
    payload: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '0000-01-01' },
    field: 'expiration_date',
  },
  {
    name: 'NUL in a member first_name',
    method: 'POST',
    url: () => '/members',
    payload: { brand_id: 'brand-acme', email: 'nul@example.org', first_name: NUL },
    field: 'first_name',
  },
  {
    name: 'a lone surrogate in a member last_name',
    method: 'POST',
    url: () => '/members',
    payload: { brand_id: 'brand-acme', email: 'lone@example.org', last_name: LONE },
    field: 'last_name',
  },
  {
    name: 'year 0000 in a member birth_day',
    method: 'POST',
    url: () => '/members',
    payload: { brand_id: 'brand-acme', email: 'old@example.org', birth_day: '0000-01-01' },
    field: 'birth_day',
  },
  {
    name: 'NUL in a member update',
    method: 'PUT',
    url: () => `/members/${memberId}`,
    payload: { brand_id: 'brand-acme', city: NUL },
    field: 'city',
  },
  {
    name: 'year 0000 in a member update birth_day',
    method: 'PUT',
    url: () => `/members/${memberId}`,
    payload: { brand_id: 'brand-acme', birth_day: '0000-02-03' },
    field: 'birth_day',
  },
  {
    name: 'NUL in the brand_id query of get member',
    method: 'GET',
    url: () => `/members/${memberId}?brand_id=brand-acme%00`,
    field: 'brand_id',
  },
  {
    name: 'NUL in the member path',
    method: 'GET',
    url: () => `/members/${memberId}%00?brand_id=brand-acme`,
    field: 'uuid',
  },
  {
    name: 'NUL in the brand_id query of delete member',
    method: 'DELETE',
    url: () => `/members/${memberId}?brand_id=brand-acme%00`,
    field: 'brand_id',
  },
  {
    name: 'NUL in the e-mail of search member',
    method: 'GET',
    url: () => '/members?brand_id=brand-acme%00',
    field: 'brand_id',
  },
  {
    name: 'a lone surrogate in a bulk member field',
    method: 'PUT',
    url: () => '/bulk/members',
    payload: () => ({ brand_id: 'brand-acme', members: [{ identifier: memberId, street: LONE }] }),
    field: 'members.0.street',
  },
  {
    name: 'NUL in a bulk member field',
    method: 'PUT',
    url: () => '/bulk/members',
    payload: () => ({ brand_id: 'brand-acme', members: [{ identifier: memberId, postcode: NUL }] }),
    field: 'members.0.postcode',
  },
  {
    name: 'year 0000 in a bulk member birth_day',
    method: 'PUT',
    url: () => '/bulk/members',
    payload: () => ({ brand_id: 'brand-acme', members: [{ identifier: memberId, birth_day: '0000-01-01' }] }),
    field: 'members.0.birth_day',
  },
  {
    name: 'NUL in the brand_id of list members',
    method: 'POST',
    url: () => '/members/list',
    payload: { brand_id: NUL },
    field: 'brand_id',
  },
  {
    name: 'NUL in the brand_id of export',
    method: 'POST',
    url: () => '/import/export',
    payload: { brand_id: 'brand-acme', storecard_id: NUL },
    field: 'storecard_id',
  },
  {
    name: 'NUL in an e-mail of find UUIDs',
    method: 'POST',
    url: () => '/members/uuid',
    payload: { brand_id: 'brand-acme', emails: [NUL] },
    field: 'emails.0',
  },
  {
    name: 'NUL in the brand_id of subscribe',
    method: 'PATCH',
    url: () => '/members/subscribe',
    payload: { brand_id: NUL, email: 'edge@example.org' },
    field: 'brand_id',
  },
  {
    name: 'NUL in the brand_id of unsubscribe',
    method: 'PATCH',
    url: () => '/members/unsubscribe',
    payload: { brand_id: NUL, email: 'edge@example.org' },
    field: 'brand_id',
  },
  {
    name: 'NUL in the brand_id of bulk subscribe',
    method: 'POST',
    url: () => '/members/subscribe',
    payload: { brand_id: NUL, email: ['edge@example.org'] },
    field: 'brand_id',
  },
  {
    name: 'NUL in a sign-up first_name',
    method: 'POST',
    url: () => '/members/signups',
    payload: { brand_id: 'brand-acme', users: [{ email: 'signup@example.org', first_name: NUL }] },
    field: 'users.0.first_name',
  },
  {
    name: 'year 0000 in a sign-up subscribed_at',
    method: 'POST',
    url: () => '/members/signups',
    payload: { brand_id: 'brand-acme', users: [{ email: 'signup@example.org', subscribed_at: '0000-01-01 00:00:00' }] },
    field: 'users.0.subscribed_at',
  },
  {
    name: 'year 0000 in an RFC 3339 subscribed_at',
    method: 'POST',
    url: () => '/members/signups',
    payload: {
      brand_id: 'brand-acme',
      users: [{ email: 'signup@example.org', subscribed_at: '0000-12-31T23:00:00Z' }],
    },
    field: 'users.0.subscribed_at',
  },
  {
    name: 'a members/list page past what the database can offset',
    method: 'POST',
    url: () => '/members/list',
    payload: { brand_id: 'brand-acme', page: 1e20, per_page: 10 },
    field: 'page',
  },
  {
    name: 'NUL in the favourite location',
    method: 'POST',
    url: () => '/members/location',
    payload: () => ({ location_id: NUL, users: [memberId] }),
    field: 'location_id',
  },
  {
    name: 'NUL in the coupon_id of issue pass',
    method: 'POST',
    url: () => `/members/${memberId}/passes`,
    payload: { brand_id: 'brand-acme', coupon_id: NUL },
    field: 'coupon_id',
  },
  {
    name: 'year 0000 in the expiration_date of issue pass',
    method: 'POST',
    url: () => `/members/${memberId}/passes`,
    payload: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '0000-01-01' },
    field: 'expiration_date',
  },
  {
    name: 'NUL in the brand_id query of member coupons',
    method: 'GET',
    url: () => `/members/${memberId}/coupons?brand_id=brand-acme%00`,
    field: 'brand_id',
  },
  {
    name: 'a page past int4 in member storecards',
    method: 'GET',
    url: () => `/members/${memberId}/storecards?brand_id=brand-acme&page=100000000000000000000`,
    field: 'page',
  },
  {
    name: 'NUL in a coupon scan pass_code',
    method: 'POST',
    url: () => '/passes/scan',
    payload: { pass_code: NUL },
    field: 'pass_code',
  },
  {
    name: 'NUL in a storecard scan pass_code',
    method: 'POST',
    url: () => '/passes/scan/storecard',
    payload: { pass_code: NUL, type: 'earn', points: 1, transaction_reference: 'ref-1' },
    field: 'pass_code',
  },
  {
    name: 'a lone surrogate in a transaction_reference',
    method: 'POST',
    url: () => '/passes/scan/storecard',
    payload: { pass_code: 'x', type: 'earn', points: 1, transaction_reference: LONE },
    field: 'transaction_reference',
  },
  {
    name: 'NUL in reverses',
    method: 'POST',
    url: () => '/passes/scan/storecard',
    payload: { pass_code: 'x', type: 'reverse', reverses: NUL, transaction_reference: 'ref-2' },
    field: 'reverses',
  },
  {
    name: 'NUL in a webshop first name',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ firstname: NUL }),
    field: 'firstname',
  },
  {
    name: 'NUL in the webshop organization_identifier',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ organization_identifier: NUL }),
    field: 'organization_identifier',
  },
  {
    name: 'a lone surrogate in a webshop address',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ shipping_address: { ...address, address1: LONE } }),
    field: 'shipping_address.address1',
  },
  {
    name: 'NUL in a webshop address',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ shipping_address: { ...address, city: NUL } }),
    field: 'shipping_address.city',
  },
  {
    name: 'a lone surrogate in an undeclared webshop address field',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ shipping_address: { ...address, floor: LONE } }),
    field: 'shipping_address.floor',
  },
  {
    name: 'NUL in a property name of a webshop address',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ shipping_address: { ...address, [NUL]: 'x' } }),
    field: 'shipping_address',
  },
  {
    name: 'a lone surrogate in an undeclared bulk member field',
    method: 'PUT',
    url: () => '/bulk/members',
    payload: () => ({ brand_id: 'brand-acme', members: [{ identifier: memberId, nickname: LONE }] }),
    field: 'members.0.nickname',
  },
  {
    name: 'a webshop product_id past int4',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ products: [{ product_id: 99999999999, quantity: 1 }] }),
    field: 'products.0.product_id',
  },
  {
    name: 'a webshop variant_id past int4',
    method: 'POST',
    url: () => '/webshop-promotions/orders',
    as: 'till',
    payload: order({ products: [{ product_id: 1, quantity: 1, location_id: 1, variant_id: 99999999999 }] }),
    field: 'products.0.variant_id',
  },
  {
    name: 'a product batch id past int4',
    method: 'POST',
    url: () => '/products/batch',
    as: 'till',
    payload: { product_ids: [99999999999] },
    field: 'product_ids.0',
  },
  {
    name: 'a 20-digit txid in the events cursor',
    method: 'GET',
    url: () => '/events?after=99999999999999999999.1',
    field: 'after',
  },
  {
    name: 'a seq past bigint in the events cursor',
    method: 'GET',
    url: () => '/events?after=1.9999999999999999999',
    field: 'after',
  },
  {
    name: 'NUL in a webhook url',
    method: 'POST',
    url: () => '/webhook-subscriptions',
    payload: { url: `https://example.org/${NUL}`, events: ['member.created'] },
    field: 'url',
  },
];

describe('input rules at the edge', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.status ?? 422} naming ${c.field}, nothing written`, async () => {
      const before = await rowCounts();
      const headers = {
        ...(c.as === 'none' ? {} : c.as === 'till' ? till : admin),
        'content-type': c.form ? 'application/x-www-form-urlencoded' : 'application/json',
      };
      const payload = typeof c.payload === 'function' ? c.payload() : c.payload;
      const res = await t.inject({
        method: c.method,
        url: c.url(),
        headers,
        ...(payload !== undefined && { payload: c.form ? String(payload) : JSON.stringify(payload) }),
      });
      expect(res.statusCode, res.payload).toBe(c.status ?? 422);
      expect(namedFields(JSON.parse(res.payload))).toContain(c.field);
      expect(await rowCounts()).toEqual(before);
    });
  }
});

describe('percent-escapes that are not UTF-8', () => {
  // A surrogate cannot be sent as UTF-8 (%ED%A0%80 is invalid UTF-8), nor can a stray byte.
  const urls = [
    '/tags/%ED%A0%80/vouchers',
    '/tags/%FF/vouchers',
    '/tags/edge/vouchers?brand_id=%ED%A0%80',
    '/members?brand_id=%FF&email=edge%40example.org',
    '/tags/passes?brand_id=brand-acme&tag_id=%ED%B0%80',
    '/events?after=%00',
  ];
  for (const url of urls) {
    it(`${url} answers 4xx, never 5xx`, async () => {
      const method = url.includes('/vouchers') && !url.includes('?') ? 'POST' : 'GET';
      const res = await t.inject({
        method,
        url,
        headers: { ...admin, 'content-type': 'application/json' },
        ...(method === 'POST' && { payload: JSON.stringify({ brand_id: 'brand-acme', coupon_id: 'coupon-welcome' }) }),
      });
      expect(res.statusCode, res.payload).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.payload).toBeLessThan(500);
    });
  }
});

/**
 * Every string field of every operation's request, from openapi.yaml: a NUL (and, in JSON bodies,
 * a lone surrogate) in that one field answers 4xx naming it. The rest of the request is whatever
 * the walk gives (mostly missing), so the field's own error must be among the ones reported.
 */
/** Stands for the member's id in probe URLs (built before the server exists). */
const MEMBER = '@member@';
type Probe = {
  operation: string;
  method: string;
  url: string;
  form: boolean;
  payload?: string;
  field: string;
  /** Sent with credentials that meet the operation's `security` (`t.authFor`), so it reaches validation. */
  op: Operation;
};

function stringLeaves(
  doc: OpenApiDocument,
  schema: unknown,
  depth = 0,
): { path: string[]; value: (s: string) => unknown }[] {
  const node = deref<Record<string, unknown>>(doc, schema);
  if (!node || typeof node !== 'object' || depth > 4) return [];
  const types = ([] as unknown[]).concat(node.type ?? []);
  const leaves: { path: string[]; value: (s: string) => unknown }[] = [];
  if (types.includes('string') && !node.enum && node.const === undefined) leaves.push({ path: [], value: (s) => s });
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const)
    for (const branch of (node[key] as unknown[] | undefined) ?? [])
      leaves.push(...stringLeaves(doc, branch, depth + 1));
  for (const [name, sub] of Object.entries((node.properties as Record<string, unknown> | undefined) ?? {})) {
    for (const leaf of stringLeaves(doc, sub, depth + 1))
      leaves.push({ path: [name, ...leaf.path], value: (s) => ({ [name]: leaf.value(s) }) });
  }
  if (node.items)
    for (const leaf of stringLeaves(doc, node.items, depth + 1))
      leaves.push({ path: ['0', ...leaf.path], value: (s) => [leaf.value(s)] });
  const seen = new Set<string>();
  return leaves.filter((l) => !seen.has(l.path.join('.')) && seen.add(l.path.join('.')));
}

function probes(): Probe[] {
  const { document } = loadOpenApi();
  const out: Probe[] = [];
  for (const op of listOperations(document)) {
    if (op.path === '/health' || op.path === '/openapi.yaml') continue;
    const form = op.path === '/oauth/token';
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const fill = (name?: string, value?: string) =>
      op.path.replace(/\{(\w+)\}/g, (_, p: string) =>
        p === name ? value! : p === 'id' && op.path.startsWith('/tags') ? 'edge' : MEMBER,
      );
    const base = `${op.method} ${op.path}`;
    for (const p of pathParams)
      out.push({
        operation: base,
        method: op.method,
        url: fill(p.name, 'x%00y'),
        form,
        field: p.name,
        op,
        ...(op.bodySchema && { payload: form ? '' : '{}' }),
      });
    for (const p of op.parameters.filter((q) => q.in === 'query')) {
      if (!stringLeaves(document, p.schema).length) continue;
      out.push({ operation: base, method: op.method, url: `${fill()}?${p.name}=x%00y`, form, field: p.name, op });
    }
    if (!op.bodySchema) continue;
    for (const leaf of stringLeaves(document, op.bodySchema)) {
      if (!leaf.path.length) continue;
      const field = leaf.path.join('.');
      for (const bad of form ? [NUL] : [NUL, LONE]) {
        const body = leaf.value(bad) as Record<string, unknown>;
        const payload = form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
        out.push({ operation: base, method: op.method, url: fill(), form, payload, field, op });
      }
    }
  }
  return out;
}

describe('every string field of every operation (from openapi.yaml)', () => {
  const all = probes();
  it('covers the operations', () => {
    expect(new Set(all.map((p) => p.operation)).size).toBeGreaterThan(30);
    expect(all.length).toBeGreaterThan(150);
  });
  const byOperation = new Map<string, Probe[]>();
  for (const p of all) byOperation.set(p.operation, [...(byOperation.get(p.operation) ?? []), p]);
  for (const [operation, list] of byOperation) {
    it(`${operation}: NUL and lone surrogates answer 4xx naming the field, nothing written (${list.length} requests)`, async () => {
      const before = await rowCounts();
      const failures: string[] = [];
      for (const p of list) {
        const headers = {
          ...(await t.authFor(p.op)),
          'content-type': p.form ? 'application/x-www-form-urlencoded' : 'application/json',
        };
        const res = await t.inject({
          method: p.method,
          url: p.url.replaceAll(MEMBER, memberId),
          headers,
          ...(p.payload !== undefined && { payload: p.payload }),
        });
        const body = JSON.parse(res.payload || '{}') as Record<string, unknown>;
        const named = namedFields(body);
        if (res.statusCode !== 422 && !(p.form && res.statusCode === 400))
          failures.push(`${p.field} ${p.url} ${p.payload ?? ''} → ${res.statusCode} ${res.payload.slice(0, 160)}`);
        else if (!named.includes(p.field)) failures.push(`${p.field} not named: ${res.payload.slice(0, 200)}`);
      }
      expect(failures).toEqual([]);
      expect(await rowCounts()).toEqual(before);
    });
  }
});
