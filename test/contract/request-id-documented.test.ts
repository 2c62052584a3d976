import { expect, it } from 'vitest';
import { deref, listOperations, loadOpenApi } from '../../server/src/lib/openapi.js';

/** Issue 14: the X-Request-Id that every answer carries (plugins/request-id.ts) is documented on every response. */
it('every response of every operation in openapi.yaml documents the X-Request-Id header', () => {
  const { document } = loadOpenApi();
  const missing: string[] = [];
  for (const op of listOperations(document)) {
    for (const [status, response] of Object.entries((op.raw.responses ?? {}) as Record<string, unknown>)) {
      const headers = deref<{ headers?: Record<string, unknown> }>(document, response)?.headers ?? {};
      if (!('X-Request-Id' in headers)) missing.push(`${op.method} ${op.path} ${status}`);
    }
  }
  expect(missing).toEqual([]);
});
