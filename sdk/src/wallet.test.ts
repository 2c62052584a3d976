import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from './client.js';
import { isLoyaltyError } from './errors.js';
import { mswServer, zipOf } from './test-support.js';
import { diffPasses, type PassJson, passFields, readPkpass, WalletDevice, walletLinks } from './wallet.js';

const baseUrl = 'http://wallet.test';
const server = mswServer();

const storecard = (balance: number, extra: Partial<PassJson> = {}): PassJson => ({
  formatVersion: 1,
  passTypeIdentifier: 'pass.dev.loyalty.sandbox',
  serialNumber: 'serial-1',
  teamIdentifier: 'LOYALTYSBX',
  organizationName: 'Acme',
  description: 'Acme points',
  authenticationToken: 'token-of-serial-1-xxxxxxxx',
  webServiceURL: `${baseUrl}/wallet/apple`,
  storeCard: {
    headerFields: [{ key: 'points', label: 'Points', value: balance / 10 }],
    primaryFields: [{ key: 'balance', label: 'Balance', value: balance, changeMessage: 'Balance %@' }],
    backFields: [{ key: 'terms', label: 'Terms', value: 'None' }],
  },
  ...extra,
});
const pkpassOf = (pass: PassJson, options?: { stored?: boolean }) =>
  zipOf({ 'pass.json': JSON.stringify(pass), 'icon.png': Buffer.from([1, 2, 3]), 'manifest.json': '{}' }, options);

describe('readPkpass', () => {
  it('opens deflated and stored archives: pass.json parsed, every file by name', () => {
    for (const stored of [false, true]) {
      const { passJson, files } = readPkpass(pkpassOf(storecard(120), { stored }));
      expect(passJson.serialNumber).toBe('serial-1');
      expect([...files.keys()]).toEqual(['pass.json', 'icon.png', 'manifest.json']);
      expect(files.get('icon.png')).toEqual(Buffer.from([1, 2, 3]));
    }
    expect(readPkpass(new Uint8Array(pkpassOf(storecard(1)))).passJson.formatVersion).toBe(1);
  });

  it('refuses what is not a readable pass, saying why', () => {
    expect(() => readPkpass(Buffer.from('PK not really'))).toThrow(/not a readable \.pkpass: not a zip/);
    const damaged = pkpassOf(storecard(120), { stored: true });
    const at = damaged.indexOf('"serialNumber"') + 2;
    damaged[at] = (damaged[at] ?? 0) ^ 1; // one bit of pass.json flipped
    expect(() => readPkpass(damaged)).toThrow(/pass\.json fails its CRC-32 check/);
    expect(() => readPkpass(zipOf({ 'icon.png': 'x' }))).toThrow(/has no pass\.json/);
    expect(() => readPkpass(zipOf({ 'pass.json': '{"a":' }))).toThrow(/pass\.json is not JSON/);
    expect(() => readPkpass(zipOf({ 'pass.json': '[1]' }))).toThrow(/not a JSON object/);
  });
});

describe('passFields and diffPasses', () => {
  it('flattens the style’s fields, header to back, with their area', () => {
    expect(passFields(storecard(120)).map((f) => [f.area, f.key, f.value])).toEqual([
      ['header', 'points', 12],
      ['primary', 'balance', 120],
      ['back', 'terms', 'None'],
    ]);
    expect(passFields({ ...storecard(1), storeCard: undefined })).toEqual([]);
  });

  it('names each change: changeMessage with %@, else "<label> <from> → <to>"; voided; expiry', () => {
    const changes = diffPasses(storecard(120), storecard(170));
    expect(changes).toEqual([
      { key: 'points', label: 'Points', from: 12, to: 17, message: 'Points 12 → 17' },
      { key: 'balance', label: 'Balance', from: 120, to: 170, message: 'Balance 170' },
    ]);
    expect(diffPasses(storecard(120), storecard(120))).toEqual([]);
    const voided = diffPasses(storecard(120), storecard(120, { voided: true, expirationDate: '2026-12-01T00:00:00Z' }));
    expect(voided.map((c) => [c.key, c.from, c.to, c.message])).toEqual([
      ['voided', false, true, 'The pass is voided (redeemed or expired)'],
      ['expirationDate', undefined, '2026-12-01T00:00:00Z', 'expires — → 2026-12-01T00:00:00Z'],
    ]);
    const gone = storecard(120);
    gone.storeCard = { primaryFields: [{ key: 'note', value: 'new' }] };
    expect(diffPasses(storecard(120), gone).map((c) => c.message)).toEqual([
      'note — → new',
      'Points 12 → —',
      'Balance 120 → —',
      'Terms None → —',
    ]);
  });
});

/** A server holding one pass: its versions, the device's registration and a push sink. */
function fakeWalletServer() {
  let version = 1;
  let pass = storecard(120);
  const state = {
    registered: new Map<string, string>(),
    pushes: [] as { id: string; topic: string; sent_at: string; token: string }[],
    requests: [] as { method: string; url: URL; headers: Headers; body?: unknown }[],
    update(next: PassJson) {
      pass = next;
      version++;
      for (const token of state.registered.values())
        state.pushes.push({ id: String(state.pushes.length + 1), topic: next.passTypeIdentifier, sent_at: '', token });
    },
  };
  const lastModified = () => new Date(Date.UTC(2026, 10, 27, 10, 0, version)).toUTCString();
  const authorized = (request: Request) =>
    request.headers.get('authorization') === `ApplePass ${pass.authenticationToken}`;
  const log = async (request: Request) => {
    const body = request.method === 'POST' ? await request.clone().json() : undefined;
    state.requests.push({ method: request.method, url: new URL(request.url), headers: request.headers, body });
  };
  const registration = `${baseUrl}/wallet/apple/v1/devices/:device/registrations/:type/:serial`;
  server.use(
    http.get(`${baseUrl}/wallet/:file`, async ({ request, params }) => {
      await log(request);
      if (params.file !== 'CODE1.pkpass')
        return HttpResponse.json(
          { success: false, error: 'not_found', message: 'No pass has this code.' },
          { status: 404 },
        );
      return new HttpResponse(pkpassOf(pass), { headers: { 'last-modified': lastModified(), etag: `"v${version}"` } });
    }),
    http.post(registration, async ({ request, params }) => {
      await log(request);
      if (!authorized(request)) return new HttpResponse(null, { status: 401 });
      const known = state.registered.has(String(params.device));
      state.registered.set(String(params.device), ((await request.json()) as { pushToken: string }).pushToken);
      return new HttpResponse(null, { status: known ? 200 : 201 });
    }),
    http.delete(registration, async ({ request, params }) => {
      await log(request);
      if (!authorized(request)) return new HttpResponse(null, { status: 401 });
      state.registered.delete(String(params.device));
      return new HttpResponse(null, { status: 200 });
    }),
    http.get(`${baseUrl}/wallet/apple/v1/devices/:device/registrations/:type`, async ({ request }) => {
      await log(request);
      const since = new URL(request.url).searchParams.get('passesUpdatedSince');
      if (since === String(version)) return new HttpResponse(null, { status: 204 });
      return HttpResponse.json({ serialNumbers: [pass.serialNumber], lastUpdated: String(version) });
    }),
    http.get(`${baseUrl}/wallet/apple/v1/passes/:type/:serial`, async ({ request }) => {
      await log(request);
      if (!authorized(request)) return new HttpResponse(null, { status: 401 });
      if (request.headers.get('if-modified-since') === lastModified()) return new HttpResponse(null, { status: 304 });
      return new HttpResponse(pkpassOf(pass), { headers: { 'last-modified': lastModified() } });
    }),
    http.get(`${baseUrl}/sandbox/wallet/pushes`, async ({ request }) => {
      await log(request);
      const token = request.headers.get('authorization')?.replace(/^PushToken /, '');
      const after = Number(new URL(request.url).searchParams.get('after') ?? 0);
      const data = state.pushes
        .filter((p) => p.token === token && Number(p.id) > after)
        .map(({ token: _, ...push }) => push);
      return HttpResponse.json({ data, next_after: data.at(-1)?.id ?? String(after) });
    }),
  );
  return state;
}

describe('WalletDevice', () => {
  it('downloads, registers, sees a push, lists the updated serial, fetches the new version with its changes, unregisters', async () => {
    const wallet = fakeWalletServer();
    const phone = new WalletDevice({ baseUrl: `${baseUrl}/` });
    expect(phone.deviceLibraryIdentifier).toMatch(/^[0-9a-f]{32}$/);
    expect(phone.pushToken).toMatch(/^[0-9a-f]{64}$/);

    const pass = await phone.download('CODE1');
    expect(pass.passJson.serialNumber).toBe('serial-1');
    expect(pass.etag).toBe('"v1"');
    expect(await phone.register()).toEqual({ created: true });
    expect(await phone.register()).toEqual({ created: false });
    const posted = wallet.requests.find((r) => r.method === 'POST');
    expect(posted?.url.pathname).toBe(
      `/wallet/apple/v1/devices/${phone.deviceLibraryIdentifier}/registrations/pass.dev.loyalty.sandbox/serial-1`,
    );
    expect(posted?.headers.get('authorization')).toBe('ApplePass token-of-serial-1-xxxxxxxx');
    expect(posted?.body).toEqual({ pushToken: phone.pushToken });

    expect(await phone.waitForPush({ waitSeconds: 0 })).toEqual([]);
    expect(await phone.fetchLatest()).toMatchObject({ changed: false });
    expect(wallet.requests.at(-1)?.headers.get('if-modified-since')).toBe(pass.lastModified);

    wallet.update(storecard(170));
    const pushes = await phone.waitForPush({ waitSeconds: 40 });
    expect(pushes).toEqual([{ id: '1', topic: 'pass.dev.loyalty.sandbox', sent_at: '' }]);
    const poll = wallet.requests.filter((r) => r.url.pathname === '/sandbox/wallet/pushes').at(-1);
    expect(poll?.headers.get('authorization')).toBe(`PushToken ${phone.pushToken}`);
    expect(poll?.url.searchParams.get('wait')).toBe('30'); // at most 30
    expect(await phone.waitForPush({ waitSeconds: 0 })).toEqual([]); // the cursor moved on
    expect(wallet.requests.at(-1)?.url.searchParams.get('after')).toBe('1');

    expect(await phone.updatedSerials()).toEqual(['serial-1']);
    expect(phone.lastUpdated).toBe('2');
    expect(await phone.updatedSerials()).toEqual([]); // 204
    expect(wallet.requests.at(-1)?.url.searchParams.get('passesUpdatedSince')).toBe('2');

    const latest = await phone.fetchLatest();
    expect(latest.changed && latest.changes.map((c) => c.message)).toEqual(['Points 12 → 17', 'Balance 170']);
    expect(phone.pass?.passJson.storeCard?.primaryFields?.[0]?.value).toBe(170);
    expect((await phone.fetchLatest()).changed).toBe(false);

    await phone.unregister();
    expect(wallet.registered.size).toBe(0);
  });

  it('throws LoyaltyErrors: an unknown code (404), a wrong token (401), a server that cannot be reached', async () => {
    fakeWalletServer();
    const phone = new WalletDevice({ baseUrl });
    const unknown = await phone.download('NOPE').catch((e: unknown) => e);
    expect(isLoyaltyError(unknown) && [unknown.status, unknown.code, unknown.message]).toEqual([
      404,
      'not_found',
      'No pass has this code.',
    ]);
    server.use(http.get(`${baseUrl}/wallet/HTML.pkpass`, () => HttpResponse.html('<!doctype html>…', { status: 404 })));
    const page = await phone.download('HTML').catch((e: unknown) => e);
    expect(isLoyaltyError(page) && [page.status, page.code, page.message]).toEqual([
      404,
      'not_found',
      'GET /wallet/HTML.pkpass answered HTTP 404',
    ]);
    await expect(phone.register()).rejects.toThrow(/download a pass first/);
    const pass = await phone.download('CODE1');
    pass.passJson.authenticationToken = 'wrong-token-wrong-token';
    const refused = await phone.register().catch((e: unknown) => e);
    expect(isLoyaltyError(refused) && refused.status).toBe(401);

    server.use(http.get(`${baseUrl}/sandbox/wallet/pushes`, () => HttpResponse.error()));
    const down = await phone.waitForPush({ waitSeconds: 0 }).catch((e: unknown) => e);
    expect(isLoyaltyError(down) && [down.status, down.code]).toEqual([0, 'network_error']);
    expect((down as Error).message).toMatch(/^http:\/\/wallet\.test cannot be reached/);
  });

  it('uses the webServiceURL given over the pass’s', async () => {
    fakeWalletServer();
    const phone = new WalletDevice({ baseUrl, webServiceURL: 'http://elsewhere.test/apple/' });
    await phone.download('CODE1');
    let asked: string | undefined;
    server.use(
      http.post('http://elsewhere.test/apple/v1/devices/:d/registrations/:t/:s', ({ request }) => {
        asked = request.url;
        return new HttpResponse(null, { status: 201 });
      }),
    );
    await phone.register();
    expect(asked).toMatch(/^http:\/\/elsewhere\.test\/apple\/v1\/devices\/[0-9a-f]{32}\/registrations\//);
  });
});

describe('walletLinks', () => {
  const links = {
    wallet_url: `${baseUrl}/wallet/CODE1`,
    pkpass_url: `${baseUrl}/wallet/CODE1.pkpass`,
    google_save_url: `${baseUrl}/sandbox/google-wallet/save/eyJ`,
  };
  const handler = () =>
    http.get(`${baseUrl}/wallet/:code/links`, ({ params }) =>
      params.code === 'CODE1'
        ? HttpResponse.json({ success: true, data: links })
        : HttpResponse.json({ success: false, error: 'not_found', message: 'No pass has this code.' }, { status: 404 }),
    );

  it('answers the links from a base URL or through a client; an unknown code is not_found', async () => {
    server.use(handler());
    expect(await walletLinks(baseUrl, 'CODE1')).toEqual(links);
    const client = createLoyaltyClient({ baseUrl, token: 'wallet-links-token', retry: false });
    expect(await walletLinks(client, 'CODE1')).toEqual(links);
    for (const via of [baseUrl, client]) {
      const error = await walletLinks(via, 'NOPE').catch((e: unknown) => e);
      expect(isLoyaltyError(error) && [error.status, error.code]).toEqual([404, 'not_found']);
    }
  });
});
