import type { ServerInjectOptions } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { listOperations, loadOpenApi, type Operation } from '../lib/openapi.js';
import { requestMediaTypes } from './content-type.js';

/**
 * One content-type rule for every operation, read from openapi.yaml: a body of a media type the
 * operation's requestBody does not list is a 415 with the API's error body (the contract check
 * of `inject` proves the 415 is documented). Table-driven over the document, so a new operation
 * is covered without a line here.
 */

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t.close());

const { document } = loadOpenApi();
const operations = listOperations(document).filter((op) => op.method !== 'GET');
const withBody = operations.filter((op) => requestMediaTypes(document, op).length > 0);
const withoutBody = operations.filter((op) => requestMediaTypes(document, op).length === 0);

const WRONG: { type: string; body: string }[] = [
  { type: 'application/x-www-form-urlencoded', body: 'brand_id=brand-acme&url=https%3A%2F%2Fhooks.example.com' },
  { type: 'application/octet-stream', body: '{"brand_id":"brand-acme"}' },
  { type: 'text/plain', body: '{"brand_id":"brand-acme"}' },
  { type: 'application/xml', body: '<brand_id>brand-acme</brand_id>' },
  {
    type: 'multipart/form-data; boundary=b',
    body: '--b\r\nContent-Disposition: form-data; name="brand_id"\r\n\r\nbrand-acme\r\n--b--\r\n',
  },
  { type: 'application/merge-patch+json', body: '{"brand_id":"brand-acme"}' },
];

const urlOf = (op: Operation) => op.path.replace(/\{[^}]+\}/g, '0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10');
// Credentials that hold the operation's ability (its `security` alternatives), so the request
// reaches the content-type check rather than a 401/403; a new token for every request, because the
// walk's POST /sandbox/reset revokes the tokens of the organization it resets.
const headersOf = async (op: Operation, type: string | undefined): Promise<Record<string, string>> => ({
  ...(await t.authFor(op, true)),
  ...(type && { 'content-type': type }),
});
const send = async (op: Operation, type: string | undefined, body: string) =>
  t.inject({
    method: op.method as ServerInjectOptions['method'],
    url: urlOf(op),
    headers: await headersOf(op, type),
    payload: body,
  });

describe('a request body of a media type the operation does not list', () => {
  it('the document gives every operation with a body application/json, and POST /oauth/token also forms', () => {
    expect(withBody.length).toBeGreaterThan(20);
    for (const op of withBody)
      expect(requestMediaTypes(document, op), `${op.method} ${op.path}`).toContain('application/json');
    const token = withBody.find((op) => op.path === '/oauth/token')!;
    expect(requestMediaTypes(document, token)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
  });

  for (const op of withBody) {
    const listed = requestMediaTypes(document, op);
    const wrong = WRONG.filter((w) => !listed.includes(w.type.split(';')[0]!));
    it(`${op.method} ${op.path}: 415 unsupported_media_type for ${wrong.map((w) => w.type).join(', ')}`, async () => {
      for (const { type, body } of wrong) {
        const res = await send(op, type, body);
        expect(res.statusCode, `${type}: ${res.payload}`).toBe(415);
        expect(JSON.parse(res.payload), type).toEqual({
          message: expect.stringContaining('Content-Type'),
          error: 'unsupported_media_type',
        });
      }
    });

    it(`${op.method} ${op.path}: reads what the document lists, and a body without a Content-Type as JSON`, async () => {
      for (const type of [...listed, 'application/json; charset=utf-8', undefined]) {
        const body = type?.startsWith('application/x-www-form-urlencoded') ? 'grant_type=client_credentials' : '{}';
        const res = await send(op, type, body);
        expect(res.statusCode, `${type}: ${res.payload}`).not.toBe(415);
        // Reached past auth (a token revoked by POST /sandbox/reset earlier in the walk would not).
        expect([401, 403], `${type}: ${res.payload}`).not.toContain(res.statusCode);
      }
    });
  }
});

describe('an operation the document gives no body', () => {
  for (const op of withoutBody) {
    it(`${op.method} ${op.path}: ignores whatever body is sent (no 415 the document does not describe)`, async () => {
      for (const { type, body } of WRONG) {
        const res = await send(op, type, body);
        expect(res.statusCode, `${type}: ${res.payload}`).not.toBe(415);
        // Reached past auth (a token revoked by POST /sandbox/reset earlier in the walk would not).
        expect([401, 403], `${type}: ${res.payload}`).not.toContain(res.statusCode);
      }
    });
  }
});
