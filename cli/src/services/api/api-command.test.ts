import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { addMembers, API, loggedInEnv, type FakeApi, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { buildFields, parseHeaders, typedValue } from './api-command-fields.js';
import { findOperation } from './api-command-operations.js';
import { buildProgram } from '../../main.js';
import { complete } from '../completion/completion.js';
import { showControls } from '../../ui/controls.js';

let api: FakeApi;
const server = fakeApiServer({
  each: (fresh) => {
    api = fresh;
  },
});

const env = async () => loggedInEnv(await tempConfigHome());

describe('findOperation', () => {
  it('matches a concrete path to its template, literal segments first', () => {
    expect(findOperation('post', '/members/list').operationId).toBe('listMembers');
    expect(findOperation('GET', '/members/3c9e5b0a-0000-4000-8000-000000000001').operationId).toBe('getMember');
    expect(findOperation('GET', '/tags/7/vouchers/job-1').operationId).toBe('getVoucherJob');
  });

  it('refuses an unknown path with the closest operations, and a method the path lacks with its methods', () => {
    expect(() => findOperation('GET', '/tag')).toThrow(/GET \/tag is not an operation/);
    try {
      findOperation('GET', '/tag');
    } catch (error) {
      expect((error as { hint: string }).hint).toContain('GET /tags');
    }
    expect(() => findOperation('PATCH', '/tags')).toThrow(
      '/tags has no PATCH operation in the API (it has GET, PUT, POST, DELETE).',
    );
    expect(() => findOperation('FETCH', '/tags')).toThrow(/Unknown method "FETCH"/);
    // The URL parser would turn these into /metrics and /: not the operation that was checked.
    expect(() => findOperation('GET', '/members/..')).toThrow(/is not an operation/);
    expect(() => findOperation('GET', '/members/%2E%2e')).toThrow(/is not an operation/);
  });
});

describe('completion of loyalty api', () => {
  const values = async (...words: string[]) =>
    (await complete(buildProgram(), words, { XDG_CONFIG_HOME: '/nonexistent/loyalty-api-test' })).candidates.map(
      (candidate) => candidate.value,
    );

  it('completes the method, the path templates of the document and the flags', async () => {
    expect(await values('api', 'P')).toEqual(['POST', 'PUT', 'PATCH']);
    expect(await values('api', 'GET', '/members/')).toContain('/members/{uuid}/coupons');
    expect(await values('api', 'GET', '/tags', '--pag')).toEqual(['--paginate']);
  });
});

describe('fields', () => {
  it('types --field values (numbers, booleans, null) and keeps --raw-field values strings', async () => {
    expect([typedValue('42'), typedValue('-1.5'), typedValue('true'), typedValue('null'), typedValue('007')]).toEqual([
      42,
      -1.5,
      true,
      null,
      '007',
    ]);
    const fields = await buildFields({
      typed: ['per_page=1000', 'emails[]=a@example.com', 'emails[]=b@example.com', 'meta[x]=1', 'note=@n.txt'],
      raw: ['page=2'],
      readFile: async (path) => `contents of ${path}`,
    });
    expect(fields).toEqual({
      per_page: 1000,
      emails: ['a@example.com', 'b@example.com'],
      meta: { x: 1 },
      note: 'contents of n.txt',
      page: '2',
    });
    await expect(buildFields({ typed: ['novalue'], raw: [], readFile: async () => '' })).rejects.toThrow(
      '--field "novalue" is not key=value.',
    );
  });

  it('reads headers as "Name: value" and refuses others', () => {
    expect(parseHeaders(['Idempotency-Key: k-1', 'X-Thing:  two words '])).toEqual({
      'Idempotency-Key': 'k-1',
      'X-Thing': 'two words',
    });
    expect(() => parseHeaders(['no colon'])).toThrow('--header "no colon" is not "Name: value".');
  });
});

describe('loyalty api', { timeout: 20_000 }, () => {
  it('GET /tags prints the answer as compact JSON in a pipe', async () => {
    const result = await runCli(['api', 'GET', '/tags'], { env: await env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^\{"success":true,"data":\[\{"tag":"VIP",.*\}\]\}\n$/);
  });

  it('POST /tags sends typed fields as the JSON body with an Idempotency-Key, or the header given', async () => {
    const result = await runCli(
      ['api', 'POST', '/tags', '-f', 'tag=Gold', '-f', 'external_reference=gold', '-f', 'brand_id=brand-acme'],
      { env: await env(), tty: true },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ success: true, data: { tag: 'Gold' } });
    expect(result.stdout).toContain('\n  "success": true'); // pretty on a terminal
    const sent = api.requests.find((r) => r.method === 'POST' && r.path === '/tags');
    expect(sent?.body).toEqual({ tag: 'Gold', external_reference: 'gold', brand_id: 'brand-acme' });
    expect(sent?.headers.get('idempotency-key')).toMatch(/.+/);

    const dir = await tempConfigHome();
    await writeFile(join(dir, 'name.txt'), 'Silver');
    await runCli(['api', 'POST', '/tags', '-F', 'tag=@name.txt', '-H', 'Idempotency-Key: mine-1'], {
      env: await env(),
      cwd: dir,
    });
    expect(api.requests.at(-1)?.body).toEqual({ tag: 'Silver' });
    expect(api.requests.at(-1)?.headers.get('idempotency-key')).toBe('mine-1');
  });

  it('GET fields are the query string; --input sends a JSON body from stdin', async () => {
    addMembers(api, 1);
    const id = '00000000-0000-4000-9000-000000000000';
    const got = await runCli(['api', 'GET', `/members/${id}`, '-f', 'brand_id=brand-acme'], { env: await env() });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ member_id: id });
    expect(api.requests.at(-1)).toMatchObject({ method: 'GET', path: `/members/${id}` });

    const body = { brand_id: 'brand-acme', emails: ['m0@example.com'] };
    const posted = await runCli(['api', 'POST', '/members/uuid', '--input', '-'], {
      env: await env(),
      stdin: JSON.stringify(body),
    });
    expect(posted.code, posted.stderr).toBe(0);
    expect(api.requests.at(-1)?.body).toEqual(body);
    expect(JSON.parse(posted.stdout).data).toEqual({ 'm0@example.com': id });
  });

  it('--paginate follows POST /members/list page by page into one array; --jsonl prints a line per item', async () => {
    addMembers(api, 5);
    const args = ['api', 'POST', '/members/list', '-f', 'brand_id=brand-acme', '-F', 'per_page=2', '--paginate'];
    const result = await runCli(args, { env: await env() });
    expect(result.code, result.stderr).toBe(0);
    const members = JSON.parse(result.stdout) as Array<{ email: string }>;
    expect(members.map((m) => m.email)).toEqual([0, 1, 2, 3, 4].map((i) => `m${i}@example.com`));
    const pages = api.requests.filter((r) => r.path === '/members/list').map((r) => (r.body as { page: number }).page);
    expect(pages).toEqual([1, 2, 3]);

    const lines = await runCli([...args, '--jsonl'], { env: await env() });
    expect(lines.stdout.trim().split('\n')).toHaveLength(5);

    // --jq applies to each item of --jsonl (a page at a time), to the one array without it.
    const filtered = await runCli([...args, '--jsonl', '--jq', 'select(.email != "m2@example.com") | .email'], {
      env: await env(),
    });
    expect(filtered.stdout).toBe('m0@example.com\nm1@example.com\nm3@example.com\nm4@example.com\n');
    const counted = await runCli([...args, '--jq', 'length'], { env: await env() });
    expect(counted.stdout).toBe('5\n');

    const onePage = await runCli(args.slice(0, -1), { env: await env() });
    expect(JSON.parse(onePage.stdout).data).toMatchObject({ last_page: 3, members: [{ email: 'm0@example.com' }, {}] });
  });

  it('--paginate follows next_cursor as after until it is null', async () => {
    const seen: Array<string | null> = [];
    server.use(
      http.get(`${API}/webhook-subscriptions/:id/deliveries`, ({ request }) => {
        const after = new URL(request.url).searchParams.get('after');
        seen.push(after);
        const page = after === null ? 0 : Number(after);
        return HttpResponse.json({
          message: 'ok',
          data: [{ id: `d${page * 2}` }, { id: `d${page * 2 + 1}` }],
          next_cursor: page < 2 ? String(page + 1) : null,
        });
      }),
    );
    const result = await runCli(['api', 'GET', '/webhook-subscriptions/s-1/deliveries', '--paginate'], {
      env: await env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Array<{ id: string }>).map((d) => d.id)).toEqual([
      'd0',
      'd1',
      'd2',
      'd3',
      'd4',
      'd5',
    ]);
    expect(seen).toEqual([null, '1', '2']);
  });

  it('an error answer goes to stderr as sent, with the exit code of its kind', async () => {
    const result = await runCli(
      ['api', 'GET', '/members/00000000-0000-4000-9000-000000000999', '-f', 'brand_id=brand-acme'],
      { env: await env() },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('"error"');
  });

  it('refuses an unknown path, --paginate on an operation that does not page, and a bad --input', async () => {
    const unknown = await runCli(['api', 'GET', '/tagz'], { env: await env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('GET /tagz is not an operation of the API.');
    expect(unknown.stderr).toContain('GET /tags');
    const notPaged = await runCli(['api', 'GET', '/tags', '--paginate'], { env: await env() });
    expect(notPaged.code).toBe(2);
    expect(notPaged.stderr).toContain('GET /tags (listTags) does not page');
    const dir = await tempConfigHome();
    await writeFile(join(dir, 'bad.json'), '{oops');
    const bad = await runCli(['api', 'PUT', '/bulk/members', '--input', 'bad.json'], { env: await env(), cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--input bad.json is not JSON');
    const missing = await runCli(['api', 'POST', '/tags', '-F', 'tag=@nope.txt'], { env: await env(), cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Cannot read nope.txt: no such file.');
    expect(api.requests).toHaveLength(0);
  });
});

describe('loyalty api: the path is sent as written, or refused', { timeout: 20_000 }, () => {
  it.each([
    ['a backslash', '/members/..\\webhook-subscriptions\\sub-1'],
    ['a TAB hiding dots', '/members/.\t.\\webhook-subscriptions\\sub-1'],
    ['a newline', '/members/.\n./webhook-subscriptions/sub-1'],
    ['an encoded backslash', '/members/..%5cwebhook-subscriptions%5csub-1'],
    ['an encoded slash', '/members/..%2Fwebhook-subscriptions%2Fsub-1'],
    ['encoded dots', '/members/.%2e'],
    ['a BEL', '/members/abc\u0007'],
    ['a C1 control', '/members/abc\u009b'],
    ['a fragment', '/members/abc#/../../webhook-subscriptions/sub-1'],
  ])('refuses a path with %s: exit 2 naming the path, nothing sent', async (_what, path) => {
    const result = await runCli(['api', 'DELETE', path], { env: await env() });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(showControls(JSON.stringify(path)));
    expect(result.stderr).toMatch(/path/);
    expect(api.requests).toHaveLength(0);
  });

  it('still sends an ordinary path, with its query string', async () => {
    const id = '00000000-0000-4000-9000-000000000000';
    addMembers(api, 1);
    const result = await runCli(['api', 'GET', `/members/${id}?brand_id=brand-acme`], { env: await env() });
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests.at(-1)).toMatchObject({ method: 'GET', path: `/members/${id}` });
  });
});

describe('loyalty api: secrets never as values on argv', { timeout: 20_000 }, () => {
  it.each([
    [['-f', 'client_secret=acme-admin-hunter2']],
    [['-F', 'client_secret=acme-admin-hunter2']],
    [['-f', 'password=acme-admin-hunter2']],
    [['--raw-field', 'refresh_token=acme-admin-hunter2']],
    [['-F', 'meta[api_key]=acme-admin-hunter2']],
    [['-F', 'Webhook_Secret=acme-admin-hunter2']],
  ])('refuses %j with exit 2, the hint of the other flags, and sends nothing', async (flags) => {
    const result = await runCli(['api', 'POST', '/oauth/token', '-f', 'grant_type=client_credentials', ...flags], {
      env: await env(),
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('process list');
    expect(result.stderr).toContain('=@');
    expect(result.stderr).not.toContain('hunter2');
    expect(api.requests).toHaveLength(0);
  });

  it("refuses a secret in the path's query string and an Authorization header on argv", async () => {
    const inQuery = await runCli(['api', 'GET', '/tags?access_token=acme-admin-hunter2'], { env: await env() });
    expect(inQuery.code, inQuery.stderr).toBe(2);
    expect(inQuery.stderr).toContain('process list');
    expect(inQuery.stderr).not.toContain('hunter2');
    const header = await runCli(['api', 'GET', '/tags', '-H', 'Authorization: Bearer acme-admin-hunter2'], {
      env: await env(),
    });
    expect(header.code, header.stderr).toBe(2);
    expect(header.stderr).toContain('--token-file');
    expect(header.stderr).not.toContain('hunter2');
    expect(api.requests).toHaveLength(0);
  });

  it('sends a secret-named field read from a file (-F key=@file) or stdin (-F key=@-)', async () => {
    const dir = await tempConfigHome();
    await writeFile(join(dir, 'secret.txt'), 'acme-admin-secret');
    const args = ['api', 'POST', '/tags', '-f', 'tag=Gold', '-f', 'brand_id=brand-acme'];
    const fromFile = await runCli([...args, '-F', 'client_secret=@secret.txt'], { env: await env(), cwd: dir });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(api.requests.at(-1)?.body).toMatchObject({ client_secret: 'acme-admin-secret' });
    const fromStdin = await runCli([...args, '-F', 'client_secret=@-'], { env: await env(), stdin: 'from-stdin' });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(api.requests.at(-1)?.body).toMatchObject({ client_secret: 'from-stdin' });
  });
});
