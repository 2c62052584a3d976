// End to end (issue 25): throwaway sandbox organizations from the client side, against the real
// server in sandbox mode. `loyalty sandbox create --env` evaluated by a POSIX shell the way a CI
// step does, the CLI then working as the new organization, `loyalty sandbox delete`; the operator
// credential from the environment; the SDK's createSandboxOrganization and the vitest
// globalSetup example (sdk/examples/vitest-global-setup.mjs).
import type { components } from '@loyalty/sdk';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createSandboxOrganization } from '@loyalty/sdk/testing/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, describeRun, LOYALTY_BIN, type CliSandbox } from '#test-helpers/cli.js';
import type { LiveServer } from '#test-helpers/live-server.js';
import { startSandboxServer } from '#test-helpers/sandbox-server.js';

const OPERATOR_TOKEN = 'operator-token-for-the-e2e-test-0123456789';
const CI = { LOYALTY_CLIENT_ID: 'sandbox-ci', LOYALTY_CLIENT_SECRET: 'sandbox-ci-secret', LOYALTY_BRAND: '' };

let live: LiveServer;
let cli: CliSandbox;
beforeAll(async () => {
  live = await startSandboxServer({ sandboxOperatorToken: OPERATOR_TOKEN }, { worker: false });
  cli = await cliSandbox(live.url, CI);
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

type Created = components['schemas']['SandboxOrganizationCreated'];

const exists = async (id: string) =>
  (await live.db.sql`SELECT count(*)::int AS n FROM organizations WHERE id = ${id}`)[0]?.n === 1;

/** Runs a POSIX shell script with `loyalty` as a function running the built CLI, in the CLI sandbox's environment. */
async function sh(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'sh',
      ['-c', `loyalty() { node "$LOYALTY_BIN" "$@"; }\nset -e\n${script}`],
      { cwd: cli.dir, env: { ...cli.env, LOYALTY_BIN }, timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('loyalty sandbox create / delete', () => {
  it('a CI step: eval "$(loyalty sandbox create --ttl 1h --env)", the CLI works as the new organization, delete', async () => {
    const step = await sh(`
      eval "$(loyalty sandbox create --ttl 1h --name 'CI run 42' --env)"
      echo "org=$LOYALTY_ORGANIZATION_ID brand=$LOYALTY_BRAND client=$LOYALTY_CLIENT_ID"
      loyalty tags create "Run tag" --ref run-tag --json > tag.json
      loyalty tags list --json
      loyalty sandbox clock advance 2d --json
      loyalty sandbox delete "$LOYALTY_ORGANIZATION_ID"
    `);
    expect(step.code, `${step.stdout}\n${step.stderr}`).toBe(0);
    const [, id, brand, client] = /org=(sbx-\w+) brand=([0-9a-f-]{36}) client=(\S+)/.exec(step.stdout) ?? [];
    expect(client).toBe(`${id}-admin`);
    // the tag was made in the new organization's brand, as its admin; its clock moved, acme's did not
    const tags = step.stdout.slice(step.stdout.indexOf('['));
    const list = JSON.parse(tags.slice(0, tags.indexOf(']') + 1));
    expect(list).toMatchObject([{ external_reference: 'run-tag', brand_id: brand }]);
    expect(step.stdout).toMatch(new RegExp(`"organization_id": "${id}"[\\s\\S]*"offset_seconds": 172800`));
    const acmeClock = await cli.run(['sandbox', 'clock', '--json'], {
      env: { LOYALTY_CLIENT_ID: 'acme-admin', LOYALTY_CLIENT_SECRET: 'acme-admin-secret' },
    });
    expect(JSON.parse(acmeClock.stdout)).toMatchObject({ organization_id: 'org-acme', offset_seconds: 0 });
    expect(step.stderr).toMatch(new RegExp(`Deleted the sandbox organization ${id}`));
    // deleted by its own admin: the organization, its brand and its clients are gone
    expect(await exists(id ?? '')).toBe(false);
    expect((await live.db.sql`SELECT count(*)::int AS n FROM brands WHERE id = ${brand ?? ''}`)[0]?.n).toBe(0);
    expect((await live.db.sql`SELECT count(*)::int AS n FROM clients WHERE client_id LIKE ${`${id}-%`}`)[0]?.n).toBe(0);
    // no secret of it reached the step's stderr
    expect(step.stderr).not.toMatch(/LOYALTY_CLIENT_SECRET|secret/i);
  });

  it('prints a summary (secrets shown once, said so) and --json; refuses another creator and a fixture organization', async () => {
    const human = await cli.run(['sandbox', 'create', '--ttl', '30m']);
    expect(human.code, describeRun(human)).toBe(0);
    const id = /organization\s+(sbx-\w+)/.exec(human.stdout)?.[1] ?? '';
    expect(human.stdout).toMatch(new RegExp(`admin\\s+${id}-admin\\s+secret \\S{16,}`));
    expect(human.stderr).toMatch(/shown only this once/);
    const expires = Date.parse(/expires\s+(\S+)/.exec(human.stdout)?.[1] ?? '');
    expect(expires - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(30 * 60_000);

    const json = await cli.run(['sandbox', 'create', '--json']);
    const created = JSON.parse(json.stdout) as Created;
    expect(created.clients.readonly.abilities.every((a) => a.endsWith('.get'))).toBe(true);

    // acme's admin neither created it nor belongs to it
    const asAcme = { env: { LOYALTY_CLIENT_ID: 'acme-admin', LOYALTY_CLIENT_SECRET: 'acme-admin-secret' } };
    const foreign = await cli.run(['sandbox', 'delete', created.organization.id], asAcme);
    expect([foreign.code, foreign.stderr]).toEqual([1, expect.stringMatching(/No throwaway sandbox organization/)]);
    expect(await exists(created.organization.id)).toBe(true);
    const fixture = await cli.run(['sandbox', 'delete', 'org-acme']);
    expect([fixture.code, fixture.stderr]).toEqual([1, expect.stringMatching(/No throwaway sandbox organization/)]);
    expect(await exists('org-acme')).toBe(true);
    // acme's admin may not create one either (no sandbox.create)
    const refused = await cli.run(['sandbox', 'create'], asAcme);
    expect(refused.code, describeRun(refused)).not.toBe(0);
    expect(refused.stderr).not.toMatch(/\n\s+at /);

    for (const org of [id, created.organization.id]) {
      const deleted = await cli.run(['sandbox', 'delete', org, '--json']);
      expect(JSON.parse(deleted.stdout)).toEqual({ deleted: org });
    }
  });

  it('with LOYALTY_SANDBOX_OPERATOR_TOKEN in the environment and no client: creates and deletes as the operator', async () => {
    const env = { LOYALTY_CLIENT_ID: '', LOYALTY_CLIENT_SECRET: '', LOYALTY_SANDBOX_OPERATOR_TOKEN: OPERATOR_TOKEN };
    const created = await cli.run(['sandbox', 'create', '--json', '--debug'], { env });
    expect(created.code, describeRun(created)).toBe(0);
    expect(created.stderr).not.toContain(OPERATOR_TOKEN);
    const { organization } = JSON.parse(created.stdout) as Created;
    expect(await exists(organization.id)).toBe(true);
    const deleted = await cli.run(['sandbox', 'delete', organization.id], { env });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    expect(await exists(organization.id)).toBe(false);
    const wrong = await cli.run(['sandbox', 'create'], {
      env: { ...env, LOYALTY_SANDBOX_OPERATOR_TOKEN: 'not-the-operator-token-000000' },
    });
    expect(wrong.code).not.toBe(0);
  });

  it('a --ttl over 7d is refused by the server naming ttl; nothing is created', async () => {
    const before = (await live.db.sql`SELECT count(*)::int AS n FROM organizations`)[0]?.n;
    const long = await cli.run(['sandbox', 'create', '--ttl', '8d']);
    expect(long.code).not.toBe(0);
    expect(long.stderr).toMatch(/ttl/);
    expect((await live.db.sql`SELECT count(*)::int AS n FROM organizations`)[0]?.n).toBe(before);
  });
});

describe('@loyalty/sdk/testing/sandbox against the real server', () => {
  it('createSandboxOrganization: the admin client works, delete() removes it, a second delete() resolves', async () => {
    const org = await createSandboxOrganization({
      baseUrl: live.url,
      clientCredentials: { clientId: 'sandbox-ci', clientSecret: 'sandbox-ci-secret' },
      ttl: '10m',
      name: 'sdk e2e',
    });
    expect(org.organization.name).toBe('sdk e2e');
    const token = await fetch(`${live.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: org.clients.admin.client_id,
        client_secret: org.clients.admin.client_secret,
      }),
    });
    expect(token.status).toBe(200);
    await org.delete();
    expect(await exists(org.organization.id)).toBe(false);
    await org.delete();
    const refused = await createSandboxOrganization({
      baseUrl: live.url,
      operatorToken: 'wrong-operator-token-00000',
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'LoyaltyError', status: 401 });
  });

  it('the vitest globalSetup example provides a working organization and removes it on teardown', async () => {
    const { default: setup } = await import(
      new URL('../../sdk/examples/vitest-global-setup.mjs', import.meta.url).href
    );
    const provided = new Map<string, { organizationId: string; clientId: string; clientSecret: string }>();
    const teardown = await setup(
      { provide: (key: string, value: never) => provided.set(key, value) },
      { LOYALTY_API_URL: live.url, LOYALTY_SANDBOX_OPERATOR_TOKEN: OPERATOR_TOKEN },
    );
    const loyalty = provided.get('loyalty');
    expect(loyalty?.clientId).toBe(`${loyalty?.organizationId}-admin`);
    expect(await exists(loyalty?.organizationId ?? '')).toBe(true);
    await teardown();
    expect(await exists(loyalty?.organizationId ?? '')).toBe(false);
  });
});
