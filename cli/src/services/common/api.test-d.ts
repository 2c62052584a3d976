// Type-level tests of the typed calls, compiled (never run) by `npm run typecheck`: each
// `@ts-expect-error` line must fail to compile, or the build fails on the unused directive. So a
// path openapi.yaml does not have, a missing parameter or a misread answer cannot compile.
import type { LoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { hasErrorCode } from '../../error-codes.js';
import { call, request } from './api.js';

export async function typedCallsRejectWhatTheDocumentLacks(ctx: Context): Promise<string[]> {
  // @ts-expect-error -- no such path in openapi.yaml
  await call(ctx, (api, signal) => api.GET('/no-such-path', { signal }));
  // @ts-expect-error -- /tags has GET, POST, PUT and DELETE, no PATCH
  await call(ctx, (api, signal) => api.PATCH('/tags', { signal }));
  const withoutUuid = { params: { query: { brand_id: 'brand-acme' } } };
  // @ts-expect-error -- GET /members/{uuid} needs its uuid path parameter
  await call(ctx, (api, signal) => api.GET('/members/{uuid}', { ...withoutUuid, signal }));
  // @ts-expect-error -- POST /tags needs a body
  await request(ctx, (api, signal) => api.POST('/tags', { signal }));

  // The answer has the document's type, inferred from the path (no type argument to get wrong).
  const tags = await call(ctx, (api, signal) => api.GET('/tags', { signal }));
  // @ts-expect-error -- a Tag has no `name`
  void tags.data[0]?.name;
  return tags.data.map((tag) => tag.uuid);
}

export function errorCodesComeFromTheDocument(error: LoyaltyError): boolean {
  // @ts-expect-error -- not an error code of openapi.yaml (it has invalid_client)
  return hasErrorCode(error, 'invalid_clients') || hasErrorCode(error, 'idempotency_key_reuse');
}
