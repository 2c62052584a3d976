// End to end: the built `@loyalty/sdk` client against the real reference server: client
// credentials (token fetched, shared and renewed by the client itself), typed calls, typed errors.
import {
  createLoyaltyClient,
  isLoyaltyError,
  LoyaltyError,
  toLoyaltyError,
  unwrap,
  type LoyaltyClientOptions,
} from '@loyalty/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
beforeAll(async () => {
  live = await startLiveServer();
});
afterAll(() => live?.close());

/** A client whose every HTTP request (token requests included) is logged as "METHOD /path -> status". */
function loggedClient(
  options: Omit<LoyaltyClientOptions, 'baseUrl' | 'fetch'>,
  beforeSend?: (request: Request) => Promise<void>,
) {
  const wire: string[] = [];
  const client = createLoyaltyClient({
    ...(options as LoyaltyClientOptions),
    baseUrl: live.url,
    fetch: async (request) => {
      await beforeSend?.(request);
      const response = await fetch(request);
      wire.push(`${request.method} ${new URL(request.url).pathname} -> ${response.status}`);
      return response;
    },
  });
  return { client, wire };
}

const acme = { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' };
const tokensOf = async (clientId: string) =>
  (await live.db.sql`SELECT count(*)::int AS n FROM access_tokens WHERE client_id = ${clientId}`)[0]!.n as number;

it('fetches a token by itself, once for concurrent calls, and makes typed calls with it', async () => {
  const before = await tokensOf('acme-admin');
  const { client, wire } = loggedClient({ clientCredentials: acme });

  const created = await client.POST('/tags', {
    body: { brand_id: 'brand-acme', external_reference: 'sdk-e2e', tag: 'SDK e2e' },
  });
  expect(created.response.status).toBe(201);
  const tag = unwrap(created).data;
  expect(tag).toMatchObject({ tag: 'SDK e2e', external_reference: 'sdk-e2e', brand_id: 'brand-acme' });

  const lists = await Promise.all(Array.from({ length: 5 }, () => client.GET('/tags')));
  for (const list of lists) {
    expect(list.response.status).toBe(200);
    expect(unwrap(list).data.map((t) => t.uuid)).toEqual([tag.uuid]);
  }
  const [row] = await live.db.sql`SELECT id::text, tag FROM tags WHERE external_reference = 'sdk-e2e'`;
  expect(row).toEqual({ id: tag.uuid, tag: 'SDK e2e' });

  // One token request in all (the first call's), then the calls themselves.
  expect(wire.filter((w) => w.startsWith('POST /oauth/token'))).toEqual(['POST /oauth/token -> 200']);
  expect(wire[0]).toBe('POST /oauth/token -> 200');
  expect(wire.slice(1).sort()).toEqual(['POST /tags -> 201', ...Array(5).fill('GET /tags -> 200')].sort());
  expect(await tokensOf('acme-admin')).toBe(before + 1);

  // Another organization's client does not see the tag: the token is the client's own.
  const globex = loggedClient({ clientCredentials: { clientId: 'globex-admin', clientSecret: 'globex-admin-secret' } });
  expect(unwrap(await globex.client.GET('/tags')).data).toEqual([]);
});

it('a wrong secret is a typed 401 invalid_client value: one token request per burst of calls, no retries, no API call', async () => {
  const allTokens = async () => (await live.db.sql`SELECT count(*)::int AS n FROM access_tokens`)[0]!.n as number;
  const before = await allTokens();
  const { client, wire } = loggedClient({
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'not-the-secret' },
  });
  const results = await Promise.all(Array.from({ length: 5 }, () => client.GET('/tags')));
  for (const result of results) {
    expect(result.data).toBeUndefined();
    const err = toLoyaltyError(result);
    expect(err).toBeInstanceOf(LoyaltyError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_client' });
    expect(err!.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed.' });
    expect(err!.response?.status).toBe(401);
  }
  expect(wire).toEqual(['POST /oauth/token -> 401']);

  // unwrap throws the same typed error; a later call asks again (a refusal is not cached as a token).
  const thrown = await client
    .GET('/tags')
    .then(unwrap, (e: unknown) => e)
    .catch((e: unknown) => e);
  expect(isLoyaltyError(thrown)).toBe(true);
  expect(thrown).toMatchObject({ status: 401, code: 'invalid_client' });
  expect(wire).toEqual(['POST /oauth/token -> 401', 'POST /oauth/token -> 401']);
  expect(await allTokens()).toBe(before); // the refused requests issued no token
});

it('a token revoked before its first use is answered 401 once: the client fetches a new token and resends the call', async () => {
  // The server caches a token it has seen for 30 s, so the token is deleted before the server first sees it.
  let revoke = false;
  const { client, wire } = loggedClient({ clientCredentials: acme }, async (request) => {
    if (revoke && !request.url.endsWith('/oauth/token')) {
      revoke = false;
      await live.db.sql`DELETE FROM access_tokens WHERE client_id = 'acme-admin'`;
    }
  });
  revoke = true;
  const result = await client.GET('/tags');
  expect(result.response.status).toBe(200);
  expect(unwrap(result).success).toBe(true);
  expect(wire).toEqual([
    'POST /oauth/token -> 200',
    'GET /tags -> 401',
    'POST /oauth/token -> 200',
    'GET /tags -> 200',
  ]);
  expect(await tokensOf('acme-admin')).toBe(1);

  // A second revocation on the same call is not chased further: the 401 is the call's value.
  const { client: other, wire: otherWire } = loggedClient({ clientCredentials: acme }, async (request) => {
    if (!request.url.endsWith('/oauth/token'))
      await live.db.sql`DELETE FROM access_tokens WHERE client_id = 'acme-admin'`;
  });
  const refused = toLoyaltyError(await other.GET('/tags'));
  expect(refused).toMatchObject({ status: 401, code: 'unauthenticated' });
  expect(otherWire).toEqual([
    'POST /oauth/token -> 200',
    'GET /tags -> 401',
    'POST /oauth/token -> 200',
    'GET /tags -> 401',
  ]);
});

it('a fixed token that is not valid is a typed 401 unauthenticated, sent once', async () => {
  const { client, wire } = loggedClient({ token: 'not-a-token' });
  const err = toLoyaltyError(await client.GET('/tags'));
  expect(err).toMatchObject({ status: 401, code: 'unauthenticated', message: 'Unauthenticated.' });
  expect(wire).toEqual(['GET /tags -> 401']);
});

it('HTTP errors of API calls are typed values with the spec code and field paths, never retried', async () => {
  const { client, wire } = loggedClient({ clientCredentials: acme });
  const invalid = await client.POST('/members', {
    body: { brand_id: 'brand-acme', email: 'not-an-email', unsubscribed: false },
  });
  const err = toLoyaltyError(invalid);
  expect(err).toMatchObject({ status: 422, code: 'validation_failed' });
  expect(Object.keys(err!.fields ?? {})).toEqual(['email']);
  const missing = toLoyaltyError(
    await client.POST('/members', { body: { brand_id: 'brand-nope', email: 'a@example.org', unsubscribed: false } }),
  );
  expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  expect(wire).toEqual(['POST /oauth/token -> 200', 'POST /members -> 422', 'POST /members -> 404']);
  const [members] = await live.db.sql`SELECT count(*)::int AS n FROM members`;
  expect(members!.n).toBe(0);
});

it('a `.` or `..` path parameter reaches the route of its template and gets its answer, never another route', async () => {
  const { client, wire } = loggedClient({ clientCredentials: acme });
  // The route the server matched for each API call (URL parsing would turn `/members/..` into `/`).
  const routes: string[] = [];
  const record = (request: { method: string; route: { path: string } }) => {
    if (request.route.path !== '/oauth/token') routes.push(`${request.method.toUpperCase()} ${request.route.path}`);
  };
  live.server.events.on('response', record);
  try {
    for (const uuid of ['..', '.']) {
      const member = await client.GET('/members/{uuid}', {
        params: { path: { uuid }, query: { brand_id: 'brand-acme' } },
      });
      // The member route's own answer for an id that is no UUID: 422 naming the field.
      const err = toLoyaltyError(member);
      expect(err, uuid).toMatchObject({ status: 422, code: 'validation_failed' });
      expect(Object.keys(err?.fields ?? {}), uuid).toEqual(['uuid']);
    }
    const subscription = await client.DELETE('/webhook-subscriptions/{id}', { params: { path: { id: '..' } } });
    expect(toLoyaltyError(subscription)).toMatchObject({ status: 422, fields: { id: [expect.any(String)] } });
  } finally {
    live.server.events.removeListener('response', record);
  }
  expect(routes).toEqual(['GET /members/{uuid}', 'GET /members/{uuid}', 'DELETE /webhook-subscriptions/{id}']);
  expect(wire).toEqual([
    'POST /oauth/token -> 200',
    'GET /members/%252E%252E -> 422',
    'GET /members/%252E -> 422',
    'DELETE /webhook-subscriptions/%252E%252E -> 422',
  ]);
});
