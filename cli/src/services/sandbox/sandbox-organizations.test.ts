import type { components } from '@loyalty/sdk';
import { execFileSync } from 'node:child_process';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, fakeApiServer, loggedInEnv, type FakeApi } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { shellQuote } from './sandbox-organizations.js';

let api: FakeApi;
const server = fakeApiServer({
  each: (fresh) => {
    api = fresh;
  },
});

type Created = components['schemas']['SandboxOrganizationCreated'];

const creates = () => api.requests.filter((r) => r.method === 'POST' && r.path === '/sandbox/organizations');

/** What `eval "$(loyalty sandbox create --env)"` leaves in a POSIX shell's environment. */
function evaluated(script: string): Record<string, string> {
  const out = execFileSync('sh', ['-c', 'eval "$1" && env', 'sh', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  return Object.fromEntries(
    out
      .split('\n')
      .filter((line) => line.startsWith('LOYALTY_'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('loyalty sandbox create', () => {
  it('creates one with --ttl and --name; the summary shows the ids and says the secrets are shown once', async () => {
    const result = await runCli(['sandbox', 'create', '--ttl', '30m', '--name', 'CI run 7'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(creates().map((r) => r.body)).toEqual([{ ttl: '30m', name: 'CI run 7' }]);
    expect(creates()[0]?.headers.get('authorization')).toBe('Bearer token-acme-admin');
    const id = /organization\s+(sbx-[0-9a-f]+)/.exec(result.stdout)?.[1];
    expect(id, result.stdout).toBeDefined();
    expect(result.stdout).toMatch(/CI run 7/);
    expect(result.stdout).toMatch(/expires\s+\d{4}-\d{2}-\d{2}T/);
    expect(result.stdout).toMatch(/brand\s+[0-9a-f-]{36}/);
    expect(result.stdout).toMatch(/coupon\s+[0-9a-f-]{36}/);
    expect(result.stdout).toMatch(/storecard\s+[0-9a-f-]{36}/);
    expect(result.stdout).toMatch(new RegExp(`admin\\s+${id}-admin\\s+secret [0-9a-f]{32}`));
    expect(result.stdout).toMatch(new RegExp(`readonly\\s+${id}-readonly\\s+secret [0-9a-f]{32}`));
    expect(result.stderr).toMatch(/shown only this once/);
    expect(result.stderr).toMatch(/--env/);
  });

  it('--json prints the whole answer', async () => {
    const result = await runCli(['sandbox', 'create', '--json'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code, result.stderr).toBe(0);
    const created = JSON.parse(result.stdout) as Created;
    expect(Object.keys(created).sort()).toEqual(['brand_id', 'clients', 'coupon_id', 'organization', 'storecard_id']);
    expect(created.clients.admin.abilities).toContain('sandbox.manage');
    expect(created.clients.admin.client_secret).toMatch(/^[0-9a-f]{32}$/);
    expect(creates()[0]?.body).toBeUndefined(); // the server's default ttl
  });

  it('--env prints export lines a shell can eval: the CLI then runs as the new admin client', async () => {
    const result = await runCli(['sandbox', 'create', '--ttl', '1h', '--env'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^export LOYALTY_API_URL='http:\/\/api\.test'$/),
      expect.stringMatching(/^export LOYALTY_ORGANIZATION_ID='sbx-[0-9a-f]+'$/),
      expect.stringMatching(/^export LOYALTY_BRAND='[0-9a-f-]{36}'$/),
      expect.stringMatching(/^export LOYALTY_COUPON_ID='[0-9a-f-]{36}'$/),
      expect.stringMatching(/^export LOYALTY_STORECARD_ID='[0-9a-f-]{36}'$/),
      expect.stringMatching(/^export LOYALTY_CLIENT_ID='sbx-[0-9a-f]+-admin'$/),
      expect.stringMatching(/^export LOYALTY_CLIENT_SECRET='[0-9a-f]{32}'$/),
    ]);
    const env = evaluated(result.stdout);
    expect(env.LOYALTY_CLIENT_ID).toBe(`${env.LOYALTY_ORGANIZATION_ID}-admin`);
    expect(env.LOYALTY_API_URL).toBe(API);
    // The CLI reads these: its next command authenticates as the new organization's admin.
    const tags = await runCli(['tags', 'list', '--json'], {
      env: { XDG_CONFIG_HOME: await tempConfigHome(), ...env },
    });
    expect(tags.code, tags.stderr).toBe(0);
    const token = api.requests.at(-1)?.headers.get('authorization');
    expect(token).toMatch(/^Bearer mock-token-/); // not acme-admin's token-acme-admin
  });

  it('shell-quotes every value', () => {
    expect(shellQuote("it's $HOME `x` \\")).toBe(`'it'\\''s $HOME \`x\` \\'`);
    expect(evaluated(`export LOYALTY_X=${shellQuote("a'b $(id)\nc")}`).LOYALTY_X).toBe("a'b $(id)");
  });

  it('uses the operator credential from LOYALTY_SANDBOX_OPERATOR_TOKEN (no token request) when it is set', async () => {
    const home = await tempConfigHome();
    const result = await runCli(['sandbox', 'create', '--json'], {
      env: { XDG_CONFIG_HOME: home, LOYALTY_API_URL: API, LOYALTY_SANDBOX_OPERATOR_TOKEN: 'operator-secret-1' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(creates()[0]?.headers.get('authorization')).toBe('Bearer operator-secret-1');
    expect(result.stderr).not.toMatch(/operator-secret-1/);
  });

  it('refuses bad input before calling: a malformed --ttl, --json with --env, a secret-looking flag', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const badTtl = await runCli(['sandbox', 'create', '--ttl', '1w'], { env });
    expect([badTtl.code, badTtl.stderr]).toEqual([2, expect.stringMatching(/--ttl must be .*30m.*got "1w"/)]);
    const both = await runCli(['sandbox', 'create', '--json', '--env'], { env });
    expect([both.code, both.stderr]).toEqual([2, expect.stringMatching(/--json or --env/)]);
    const jq = await runCli(['sandbox', 'create', '--jq', '.client_id', '--env'], { env });
    expect([jq.code, jq.stderr]).toEqual([2, expect.stringMatching(/Pass --jq or --env, not both/)]);
    const flag = await runCli(['sandbox', 'create', '--operator-token', 'x'], { env });
    expect([flag.code, flag.stderr]).toEqual([2, expect.stringMatching(/LOYALTY_SANDBOX_OPERATOR_TOKEN/)]);
    expect(creates()).toEqual([]);
  });

  it("names the server's refusal of a field (422 on ttl), and a server not in sandbox mode", async () => {
    const env = loggedInEnv(await tempConfigHome());
    const long = await runCli(['sandbox', 'create', '--ttl', '8d'], { env });
    expect(long.code).not.toBe(0);
    expect(long.stderr).toMatch(/The ttl field must be at most 7d/);
    expect(long.stderr.match(/must be at most 7d/g), 'the field message repeats the message: said once').toHaveLength(
      1,
    );
    server.use(
      http.post(`${API}/sandbox/organizations`, () =>
        HttpResponse.json({ message: 'Not Found', error: 'not_found' }, { status: 404 }),
      ),
    );
    const off = await runCli(['sandbox', 'create'], { env });
    expect([off.code, off.stderr]).toEqual([1, expect.stringMatching(/is not in sandbox mode \(LOYALTY_SANDBOX\)/)]);
  });

  it('says which credentials it takes when refused: 403 (no sandbox.create), 401 of the operator token', async () => {
    server.use(
      http.post(`${API}/sandbox/organizations`, ({ request }) =>
        request.headers.get('authorization') === 'Bearer operator-secret-1'
          ? HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 })
          : HttpResponse.json({ message: 'This action is unauthorized.', error: 'forbidden' }, { status: 403 }),
      ),
    );
    const forbidden = await runCli(['sandbox', 'create'], { env: loggedInEnv(await tempConfigHome()) });
    expect([forbidden.code, forbidden.stderr]).toEqual([
      4,
      expect.stringMatching(/→ Use a client holding sandbox\.create/),
    ]);
    const operator = await runCli(['sandbox', 'create'], {
      env: {
        XDG_CONFIG_HOME: await tempConfigHome(),
        LOYALTY_API_URL: API,
        LOYALTY_SANDBOX_OPERATOR_TOKEN: 'operator-secret-1',
      },
    });
    expect(operator.code).toBe(4);
    expect(operator.stderr).toMatch(/→ LOYALTY_SANDBOX_OPERATOR_TOKEN must be the server's operator credential/);
    expect(operator.stderr).not.toMatch(/operator-secret-1/);
  });

  it('--help shows examples, the eval recipe, and where the credentials come from', async () => {
    const help = await runCli(['sandbox', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/eval "\$\(loyalty sandbox create --ttl 1h --env\)"/);
    expect(help.stdout).toMatch(/LOYALTY_SANDBOX_OPERATOR_TOKEN/);
    expect(help.stdout).toMatch(/sandbox\.create/);
  });
});

describe('loyalty sandbox delete', () => {
  it('deletes one; an unknown id says so', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const created = JSON.parse((await runCli(['sandbox', 'create', '--json'], { env })).stdout) as Created;
    const id = created.organization.id;
    const deleted = await runCli(['sandbox', 'delete', id], { env });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toMatch(new RegExp(`Deleted the sandbox organization ${id}`));
    expect(api.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/sandbox/organizations/${id}` });
    const again = await runCli(['sandbox', 'delete', id], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`No throwaway sandbox organization ${id}`));
    expect(again.stderr).not.toMatch(/not in sandbox mode/);
  });

  it('--json prints { deleted: id }; a missing argument is a usage error', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const created = JSON.parse((await runCli(['sandbox', 'create', '--json'], { env })).stdout) as Created;
    const deleted = await runCli(['sandbox', 'delete', created.organization.id, '--json'], { env });
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: created.organization.id });
    const missing = await runCli(['sandbox', 'delete'], { env });
    expect(missing.code).toBe(2);
  });
});
