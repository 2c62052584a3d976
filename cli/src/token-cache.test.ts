import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { cachingTokenFetch, tokenCacheKey } from './token-cache.js';

function tokenServer() {
  let issued = 0;
  const seen: string[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    if (request.url.endsWith('/oauth/token')) {
      issued += 1;
      return Response.json({ token_type: 'Bearer', access_token: `t${issued}`, expires_in: 3600, scope: 'tags.get' });
    }
    seen.push(request.headers.get('authorization') ?? '');
    return request.headers.get('authorization') === 'Bearer revoked'
      ? new Response('{}', { status: 401 })
      : Response.json({ ok: true });
  };
  return { fetch, issued: () => issued, seen };
}

const tokenRequest = () => new Request('http://api.test/oauth/token', { method: 'POST', body: '{}' });
const key = tokenCacheKey('http://api.test', 'acme-admin', 'secret');

describe('cachingTokenFetch', () => {
  it('answers later runs from the cache while the token has time left, in a private file', async () => {
    const dir = await tempConfigHome();
    const server = tokenServer();
    let clock = 1_000_000;
    const run = () => cachingTokenFetch({ configDir: dir, key, fetch: server.fetch, now: () => clock });
    const first = (await (await run()(tokenRequest())).json()) as { access_token: string };
    const second = (await (await run()(tokenRequest())).json()) as { access_token: string; expires_in: number };
    expect([first.access_token, second.access_token, server.issued()]).toEqual(['t1', 't1', 1]);
    expect(second.expires_in).toBe(3600);
    expect((await stat(join(dir, 'tokens.json'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'tokens.json'), 'utf8')).not.toContain('secret');
    clock += 3600_000 - 4 * 60_000; // less than five minutes left: fetch a new one
    expect(((await (await run()(tokenRequest())).json()) as { access_token: string }).access_token).toBe('t2');
  });

  it('forgets a cached token the API refuses', async () => {
    const dir = await tempConfigHome();
    const server = tokenServer();
    const fetch = cachingTokenFetch({
      configDir: dir,
      key,
      fetch: async (r) =>
        r.url.endsWith('/oauth/token') ? Response.json({ access_token: 'revoked', expires_in: 3600 }) : server.fetch(r),
    });
    await fetch(tokenRequest());
    const refused = await fetch(new Request('http://api.test/tags', { headers: { authorization: 'Bearer revoked' } }));
    expect(refused.status).toBe(401);
    expect(JSON.parse(await readFile(join(dir, 'tokens.json'), 'utf8'))).toEqual({});
  });

  it('keeps tokens of different credentials apart', () => {
    expect(tokenCacheKey('http://api.test', 'a', 's')).not.toBe(tokenCacheKey('http://api.test', 'a', 's2'));
    expect(tokenCacheKey('http://api.test', 'a', 's')).not.toBe(tokenCacheKey('http://other.test', 'a', 's'));
  });
});
