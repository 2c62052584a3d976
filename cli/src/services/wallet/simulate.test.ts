import { http, HttpResponse } from 'msw';
import { beforeAll, describe, expect, it } from 'vitest';
import { API, fakeApiServer, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import {
  buildPkpass,
  passFiles,
  storecardPassJson,
  type TestCertificate,
  testCa,
  testSigner,
} from '#test-helpers/cli-unit/pkpass-builder.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

// `loyalty wallet simulate` against a pass web service and push sink answered by msw (the server's
// real ones are tested end to end in test/e2e/wallet-simulate.test.ts).

const server = fakeApiServer();
let ca: TestCertificate;
let signer: TestCertificate;
beforeAll(() => {
  ca = testCa();
  signer = testSigner(ca);
});

const token = 'a-token-of-at-least-16-characters';
const passJson = (balance: number, extra: Record<string, unknown> = {}) =>
  storecardPassJson({
    webServiceURL: `${API}/wallet/apple`,
    storeCard: {
      primaryFields: [{ key: 'balance', label: 'Balance', value: balance, changeMessage: 'Balance %@' }],
    },
    ...extra,
  });

/**
 * A sandbox server holding one pass (code SC-1). `script` runs once the device is registered,
 * with `update` to publish a new version (and push to the device) and `stop` to press Ctrl-C.
 */
function walletServer(options: {
  script?: (steps: { update: (pass: Record<string, unknown>) => void }) => void;
  pkpass?: (pass: Record<string, unknown>) => Buffer;
  sandbox?: boolean;
  onFetched?: (version: number) => void;
  /** Last-Modified never moves on (versions within one second, said in whole seconds). */
  staleLastModified?: boolean;
}) {
  const pack = options.pkpass ?? ((pass) => buildPkpass({ files: passFiles(pass) }, signer, [ca]));
  let version = 1;
  let pass = passJson(120);
  const state = { registered: new Map<string, string>(), deleted: 0, log: [] as string[] };
  const pushes: { id: string; token: string }[] = [];
  const waiting = new Set<() => void>();
  const modified = () => new Date(Date.UTC(2026, 0, 1, 0, 0, options.staleLastModified ? 1 : version)).toUTCString();
  const update = (next: Record<string, unknown>) => {
    pass = next;
    version += 1;
    for (const pushToken of state.registered.values()) pushes.push({ id: String(pushes.length + 1), token: pushToken });
    for (const wake of waiting) wake();
  };
  const base = `${API}/wallet/apple/v1`;
  const sandbox = options.sandbox ?? true;
  server.use(
    http.get(`${API}/wallet/:file`, ({ params }) => {
      state.log.push(`download ${params.file}`);
      return params.file === 'SC-1.pkpass'
        ? new HttpResponse(pack(pass), { headers: { 'last-modified': modified() } })
        : HttpResponse.json({ success: false, error: 'not_found', message: 'No pass has this code.' }, { status: 404 });
    }),
    http.get(`${API}/sandbox/wallet/ca.pem`, () =>
      sandbox ? new HttpResponse(ca.pem) : HttpResponse.json({ error: 'not_found' }, { status: 404 }),
    ),
    http.post(`${base}/devices/:device/registrations/:type/:serial`, async ({ request, params }) => {
      if (request.headers.get('authorization') !== `ApplePass ${token}`) return new HttpResponse(null, { status: 401 });
      state.registered.set(String(params.device), ((await request.json()) as { pushToken: string }).pushToken);
      state.log.push('register');
      setTimeout(() => options.script?.({ update }), 10);
      return new HttpResponse(null, { status: 201 });
    }),
    http.delete(`${base}/devices/:device/registrations/:type/:serial`, ({ params }) => {
      state.registered.delete(String(params.device));
      state.deleted += 1;
      state.log.push('unregister');
      return new HttpResponse(null, { status: 200 });
    }),
    http.get(`${base}/devices/:device/registrations/:type`, ({ request }) => {
      const since = new URL(request.url).searchParams.get('passesUpdatedSince');
      if (since === String(version)) return new HttpResponse(null, { status: 204 });
      return HttpResponse.json({ serialNumbers: [pass.serialNumber], lastUpdated: String(version) });
    }),
    http.get(`${base}/passes/:type/:serial`, ({ request }) => {
      if (request.headers.get('if-modified-since') === modified()) return new HttpResponse(null, { status: 304 });
      state.log.push(`fetch v${version}`);
      setTimeout(() => options.onFetched?.(version), 20);
      return new HttpResponse(pack(pass), { headers: { 'last-modified': modified() } });
    }),
    http.get(`${API}/sandbox/wallet/pushes`, async ({ request }) => {
      if (!sandbox) return HttpResponse.json({ error: 'not_found' }, { status: 404 });
      const url = new URL(request.url);
      const pushToken = request.headers.get('authorization')?.replace(/^PushToken /, '');
      const after = Number(url.searchParams.get('after') ?? 0);
      const mine = () => pushes.filter((p) => p.token === pushToken && Number(p.id) > after);
      if (mine().length === 0) {
        // Long poll: until a push, the wait, or the client gives up.
        await new Promise<void>((resolve) => {
          const wake = () => resolve();
          waiting.add(wake);
          setTimeout(wake, Number(url.searchParams.get('wait') ?? 0) * 1000);
          request.signal.addEventListener('abort', wake);
        });
      }
      const data = mine().map((p) => ({
        id: p.id,
        topic: 'pass.dev.loyalty.sandbox',
        sent_at: '2026-01-01T00:00:00Z',
      }));
      return HttpResponse.json({ data, next_after: data.at(-1)?.id ?? String(after) });
    }),
  );
  return state;
}

const env = async () => loggedInEnv(await tempConfigHome());

describe('loyalty wallet simulate', () => {
  it('--json: downloaded, verified, registered, then each update with its changes; Ctrl-C unregisters (130)', async () => {
    const ctrlC = new AbortController();
    const state = walletServer({
      script: ({ update }) => {
        update(passJson(170));
        setTimeout(() => update(passJson(170, { voided: true })), 100);
      },
      onFetched: (version) => version === 3 && ctrlC.abort(),
    });
    const run = await runCli(['wallet', 'simulate', 'SC-1', '--json'], { env: await env(), signal: ctrlC.signal });
    expect(run.code, run.stderr).toBe(130);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.event)).toEqual([
      'downloaded',
      'verified',
      'registered',
      'push',
      'updated',
      'push',
      'updated',
      'unregistered',
    ]);
    expect(events[0]).toMatchObject({ code: 'SC-1', fields: { balance: 120 }, voided: false });
    expect(events[1].chain).toBe('the CA given (Loyalty Test CA)');
    expect(events[2].device_library_identifier).toMatch(/^[0-9a-f]{32}$/);
    expect(events[4]).toMatchObject({
      changes: [{ key: 'balance', label: 'Balance', from: 120, to: 170, message: 'Balance 170' }],
      fields: { balance: 170 },
      voided: false,
    });
    expect(events[6].changes).toMatchObject([{ key: 'voided', from: false, to: true }]);
    expect(state.registered.size).toBe(0);
    expect(state.log).toEqual(['download SC-1.pkpass', 'register', 'fetch v2', 'fetch v3', 'unregister']);
    // The push token is a secret: never printed.
    expect(JSON.stringify(events)).not.toMatch(/[0-9a-f]{64}/);
  }, 20_000); // the first run imports the CLI, the SDK and PKI.js: 2–3 s on a busy machine

  it('prints "balance 120 → 170" and what the phone shows, then "Unregistered" on Ctrl-C', async () => {
    const ctrlC = new AbortController();
    walletServer({ script: ({ update }) => update(passJson(170)), onFetched: () => ctrlC.abort() });
    const run = await runCli(['wallet', 'simulate', 'SC-1'], { env: await env(), signal: ctrlC.signal });
    expect(run.code).toBe(130);
    expect(run.stdout).toMatch(/^\d\d:\d\d:\d\d {2}balance 120 → 170 {2}· Balance 170\n$/);
    expect(run.stderr).toContain('Downloaded the pass of Acme (5b0e6c1e-6a53-4a8e-9d7a-1f0b1d2c3e4f): balance 120.');
    expect(run.stderr).toContain('Verified: manifest of 6 files');
    expect(run.stderr).toContain('waiting for updates (Ctrl-C to stop)');
    expect(run.stderr).toContain('Unregistered the device.');
  });

  it('a pass listed as updated but answered 304 (Last-Modified did not move on): warns, and shows the change', async () => {
    const ctrlC = new AbortController();
    const state = walletServer({
      staleLastModified: true,
      script: ({ update }) => update(passJson(170)),
      onFetched: () => ctrlC.abort(),
    });
    const run = await runCli(['wallet', 'simulate', 'SC-1'], { env: await env(), signal: ctrlC.signal });
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('answered 304 Not Modified to If-Modified-Since Thu, 01 Jan 2026 00:00:01 GMT');
    expect(run.stderr).toContain('A phone would have missed this update.');
    expect(run.stdout).toMatch(/balance 120 → 170/);
    expect(state.log).toEqual(['download SC-1.pkpass', 'register', 'fetch v2', 'unregister']);
  });

  it('says what is wrong: an unknown code, a server not in sandbox mode, a server that is down', async () => {
    walletServer({});
    const unknown = await runCli(['wallet', 'simulate', 'NOPE'], { env: await env() });
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      expect.stringContaining(`No pass has the code "NOPE" on ${API}.`),
    ]);

    const state = walletServer({ sandbox: false });
    const off = await runCli(['wallet', 'simulate', 'SC-1'], { env: await env() });
    expect([off.code, off.stderr]).toEqual([
      1,
      expect.stringContaining(`${API} is not in sandbox mode (LOYALTY_SANDBOX).`),
    ]);
    expect(off.stderr).toContain('no sandbox CA or push sink');
    // --no-verify: the push sink's 404 says the same, and the device is unregistered again.
    const unverified = await runCli(['wallet', 'simulate', 'SC-1', '--no-verify'], { env: await env() });
    expect([unverified.code, unverified.stderr]).toEqual([1, expect.stringContaining('It has no push sink')]);
    expect(state.deleted).toBe(1);

    server.use(http.get(`${API}/wallet/:file`, () => HttpResponse.error()));
    const down = await runCli(['wallet', 'simulate', 'SC-1'], { env: await env() });
    expect([down.code, down.stderr]).toEqual([1, expect.stringContaining(`${API} is not answering (download)`)]);
    expect(down.stderr).toContain('Start one with `loyalty server`');
  });

  it('refuses a pass a phone would not install, naming the problems', async () => {
    const state = walletServer({
      pkpass: (pass) => {
        const { 'icon.png': _, ...noIcon } = passFiles(pass);
        return buildPkpass({ files: noIcon }, signer, [ca]);
      },
    });
    const run = await runCli(['wallet', 'simulate', 'SC-1'], { env: await env() });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('icon.png is missing');
    expect(run.stderr).toContain('The pass would not install on a phone: 1 problem(s) above.');
    expect(state.log).toEqual(['download SC-1.pkpass']);
  });
});
