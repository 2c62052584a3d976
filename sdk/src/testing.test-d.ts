import { createOpenApiHttp } from 'openapi-msw';
import { test } from 'vitest';
import type { paths } from './generated/openapi.js';

// The mock API (mock-api/, testing.ts) answers through openapi-msw's typed `response` helper:
// a body of the wrong shape, or a status the document does not list, does not compile.
test('mock answers are checked against the generated paths', () => {
  const http = createOpenApiHttp<paths>();
  http.get('/tags', ({ response }) => {
    // @ts-expect-error data is a list of tags
    response(200).json({ success: true, data: 5 });
    // @ts-expect-error GET /tags does not answer 201
    response(201).json({ success: true, data: [] });
    return response(200).json({ success: true, data: [] });
  });
  // @ts-expect-error not a path of the API
  http.get('/nowhere', () => undefined);
});
