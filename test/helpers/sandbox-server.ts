import type { Config } from '../../server/src/config.js';
import { fetchToken, type LiveServer, startServerWith } from './live-server.js';
import type { Json } from './server.js';
import { TEST_FIXTURES } from './test-fixtures.js';

/**
 * A live server in sandbox mode on a clone of the run's template, with the tests' fixtures (the demo
 * fixtures without their records) as its fixture file (what a reset loads again) and the real default retry schedule unless overridden.
 */
export function startSandboxServer(overrides: Partial<Config> = {}, { worker = true } = {}): Promise<LiveServer> {
  return startServerWith({ sandbox: true, fixtures: TEST_FIXTURES, ...overrides }, { worker });
}

/** `fetch` of the server with a fixture client's token and JSON; the status, headers and parsed body. */
export function apiOf(live: LiveServer) {
  const tokens = new Map<string, string>();
  const token = async (clientId = 'acme-admin', fresh = false) => {
    const cached = fresh ? undefined : tokens.get(clientId);
    if (cached) return cached;
    const value = await fetchToken(live.url, clientId);
    tokens.set(clientId, value);
    return value;
  };
  const call = async (
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
    clientId = 'acme-admin',
  ) => {
    const res = await fetch(`${live.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${await token(clientId)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = { text };
    }
    return { status: res.status, headers: res.headers, body: json };
  };
  return { call, token, forget: () => tokens.clear() };
}
