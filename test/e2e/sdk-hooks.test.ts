// End to end: the built SDK's per-call options (`retry`, `timeoutMs`) and hooks, the same
// scenarios against the msw mock (`@loyalty/sdk/testing`, `fail(…)`) and against the real server
// in sandbox mode (`Prefer: fault=…`): what the hooks are told (attempts, request ids, the replay
// of an Idempotency-Key), that they never see a credential, and that a throwing hook breaks nothing.
import {
  createLoyaltyClient,
  isLoyaltyError,
  type ClientHooks,
  type LoyaltyClient,
  requestIdOf,
  type RequestHookInfo,
  type ResponseHookInfo,
  type RetryHookInfo,
} from '@loyalty/sdk';
import { mockLoyaltyApi, type MockLoyaltyApi } from '@loyalty/sdk/testing';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveServer } from '#test-helpers/live-server.js';
import { startSandboxServer } from '#test-helpers/sandbox-server.js';

type Kind = 'server_error' | 'in_progress' | 'timeout';

interface Backend {
  name: string;
  baseUrl: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Makes the next `times` requests to `method path` fail with `kind`; the headers the call sends. */
  inject(kind: Kind, times: number, method: string, path: string, id: string): Record<string, string>;
}

/** How long a `timeout` fault holds its answer, far past the call's own timeout. */
const HOLD_SECONDS = 6;

function mockBackend(): Backend {
  const baseUrl = 'http://hooks.mock.test';
  let api: MockLoyaltyApi;
  let server: ReturnType<typeof setupServer>;
  return {
    name: 'the msw mock (@loyalty/sdk/testing)',
    baseUrl,
    async start() {
      api = mockLoyaltyApi({ baseUrl });
      server = setupServer(...api.handlers);
      server.listen({ onUnhandledRequest: 'error' });
    },
    async stop() {
      server?.close();
    },
    inject(kind, times, method, path) {
      api.fail({ with: kind, times, method, path, ...(kind === 'timeout' ? { delayMs: HOLD_SECONDS * 1000 } : {}) });
      return {};
    },
  };
}

function realBackend(): Backend {
  let live: LiveServer;
  const backend: Backend = {
    name: 'the real server (Prefer: fault=…)',
    baseUrl: '',
    async start() {
      live = await startSandboxServer({}, { worker: false });
      backend.baseUrl = live.url;
    },
    async stop() {
      await live?.close();
    },
    inject(kind, times, _method, _path, id) {
      return { Prefer: `fault=${kind};times=${times};id=${id}${kind === 'timeout' ? `;delay=${HOLD_SECONDS}` : ''}` };
    },
  };
  return backend;
}

type Seen = ['request', RequestHookInfo] | ['response', ResponseHookInfo] | ['retry', RetryHookInfo];

describe.each([mockBackend(), realBackend()])('per-call options and hooks against $name', (backend) => {
  const secret = 'acme-admin-secret';
  let client: LoyaltyClient;
  let seen: Seen[] = [];
  const hooks: ClientHooks = {
    onRequest: (info) => seen.push(['request', info]),
    onResponse: (info) => seen.push(['response', info]),
    onRetry: (info) => seen.push(['retry', info]),
  };
  const run = `r${Date.now().toString(36)}`;
  beforeAll(async () => {
    await backend.start();
    client = createLoyaltyClient({
      baseUrl: backend.baseUrl,
      clientCredentials: { clientId: 'acme-admin', clientSecret: secret },
      retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 100, deadlineMs: 20_000 },
      pacing: false,
      hooks,
    });
    await client.GET('/tags'); // the token is fetched before the tests watch
  }, 60_000);
  afterAll(() => backend.stop());
  const watch = () => {
    seen = [];
  };
  const kinds = () => seen.map(([kind, info]) => `${kind} ${info.attempt}${'status' in info ? ` ${info.status}` : ''}`);

  it('hooks see each attempt of a POST answered "in progress", its retry and the replay, with the request ids', async () => {
    watch();
    const headers = backend.inject('in_progress', 1, 'POST', '/tags', `${run}-progress`);
    const result = await client.POST('/tags', {
      body: { brand_id: 'brand-acme', external_reference: `${run}-hooks`, tag: `${run}-hooks` },
      headers,
    });
    expect(result.response.status).toBe(201);
    expect(kinds()).toEqual(['request 1', 'response 1 409', 'retry 1 409', 'request 2', 'response 2 201']);
    const last = seen.at(-1)?.[1] as ResponseHookInfo;
    expect(last).toMatchObject({ method: 'POST', path: '/tags', replayed: true, status: 201 });
    expect(last.requestId).toBe(requestIdOf(result));
    expect(seen[0]?.[1].requestId).toBe(last.requestId.replace(/-2$/, '-1'));
    expect(last.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(last.pacingWaitMs).toBe(0);
    const everything = JSON.stringify(seen);
    expect(everything).not.toContain(secret);
    expect(everything.toLowerCase()).not.toMatch(/bearer|authorization/);
  });

  it('retry: { maxAttempts: 1 } on one call answers the first 5xx; the client’s policy rides it out', async () => {
    watch();
    const headers = backend.inject('server_error', 2, 'GET', '/tags', `${run}-once`);
    const once = await client.GET('/tags', { headers, retry: { maxAttempts: 1 } });
    expect(once.response.status).toBe(503);
    expect(kinds()).toEqual(['request 1', 'response 1 503']);
    watch();
    const again = await client.GET('/tags', { headers });
    expect(again.response.status).toBe(200);
    expect(kinds()).toEqual(['request 1', 'response 1 503', 'retry 1 503', 'request 2', 'response 2 200']);
  });

  it('timeoutMs on one call gives up on a held answer; the hook is told there was none', async () => {
    watch();
    const headers = backend.inject('timeout', 1, 'GET', '/tags', `${run}-held`);
    const started = Date.now();
    const error = await client.GET('/tags', { headers, timeoutMs: 300, retry: false }).catch((e: unknown) => e);
    expect(isLoyaltyError(error) && error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(HOLD_SECONDS * 1000 - 1000);
    expect(seen.at(-1)?.[1]).toMatchObject({ status: 0, error: 'timeout', attempt: 1 });
  });

  it('a hook that throws does not break the call', async () => {
    const broken = createLoyaltyClient({
      baseUrl: backend.baseUrl,
      clientCredentials: { clientId: 'acme-admin', clientSecret: secret },
      pacing: false,
      hooks: {
        onRequest: () => {
          throw new Error('a bug in the integrator’s hook');
        },
      },
    });
    const result = await broken.GET('/tags', {
      hooks: { onResponse: () => Promise.reject(new Error('and an async one')) },
    });
    expect(result.response.status).toBe(200);
  });
});
