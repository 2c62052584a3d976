import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { addMembers, API, loggedInEnv, type FakeApi, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

let api: FakeApi;
/** Called as each PUT /bulk/members arrives (1, 2, …); false leaves it unapplied and unanswered. */
let onUpdate: (n: number) => boolean = () => true;
let updateRequests: Array<{ headers: Headers; body: unknown }> = [];
fakeApiServer({
  each: (fresh) => {
    api = fresh;
    onUpdate = () => true;
    updateRequests = [];
  },
  // PUT /bulk/members is not in the SDK's mock: as the server, it changes the names sent.
  fallback: [
    http.put(`${API}/bulk/members`, async ({ request }) => {
      if (!onUpdate(updateRequests.length + 1)) return new Promise<never>(() => undefined);
      const body = (await request.json()) as {
        members: Array<{ identifier: string; first_name?: string; last_name?: string }>;
      };
      let updated = 0;
      for (const change of body.members) {
        const member = [...api.members.values()].find((m) => m.id === change.identifier);
        if (!member) continue;
        Object.assign(member, change.first_name === undefined ? {} : { first_name: change.first_name });
        Object.assign(member, change.last_name === undefined ? {} : { last_name: change.last_name });
        updated += 1;
      }
      updateRequests.push({ headers: request.headers, body });
      return HttpResponse.json({ message: 'ok', data: { updated, not_found: [] } });
    }),
  ],
});

/** m0…m4 exist as First<i> Last<i>; the file renames m1 and m3 and adds two new members. */
async function workspace() {
  const dir = await tempConfigHome();
  addMembers(api, 5, (i) => ({ first_name: `First${i}`, last_name: `Last${i}` }));
  const rows = [0, 1, 2, 3, 4].map((i) => `m${i}@example.com,${i % 2 ? `Renamed${i}` : `First${i}`},Last${i}`);
  await writeFile(
    join(dir, 'members.csv'),
    ['email,first_name,last_name', ...rows, 'new1@example.com,N,One', 'new2@example.com,N,Two', ''].join('\n'),
  );
  return { dir, env: loggedInEnv(dir) };
}

const puts = () => updateRequests;
const sent = (path: string) => api.requests.filter((r) => r.path === path).length;

describe('loyalty members import --update', { timeout: 20_000 }, () => {
  it('--dry-run counts created, updated and unchanged from the member list, and changes nothing', async () => {
    const { dir, env } = await workspace();
    const result = await runCli(['members', 'import', 'members.csv', '--update', '--dry-run'], { env, cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/created\s+2\n\s+updated\s+2\n\s+unchanged\s+3\n\s+rejected\s+0/);
    expect(sent('/members/list')).toBe(1);
    expect(sent('/members/signups')).toBe(0);
    expect(puts()).toHaveLength(0);
  });

  it('updates only the differing names through PUT /bulk/members; a second run updates none', async () => {
    const { dir, env } = await workspace();
    const first = await runCli(['members', 'import', 'members.csv', '--update', '--json'], { env, cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ new: 2, found: 5, updated: 2 });
    expect(puts().map((r) => r.body)).toEqual([
      {
        brand_id: 'brand-acme',
        members: [
          { identifier: api.members.get('m1@example.com')?.id, first_name: 'Renamed1' },
          { identifier: api.members.get('m3@example.com')?.id, first_name: 'Renamed3' },
        ],
      },
    ]);
    expect(puts()[0]?.headers.get('idempotency-key')).toMatch(/.+/);
    expect(api.members.get('m3@example.com')?.first_name).toBe('Renamed3');

    const second = await runCli(['members', 'import', 'members.csv', '--update'], { env, cwd: dir });
    expect(second.stdout).toMatch(/\n\s+updated\s+0\n/);
    expect(puts()).toHaveLength(1);
  });

  it('without --update reads no member list and updates nothing, as before', async () => {
    const { dir, env } = await workspace();
    const result = await runCli(['members', 'import', 'members.csv', '--json'], { env, cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ new: 2, found: 5 });
    expect(summary).not.toHaveProperty('updated');
    expect(sent('/members/list')).toBe(0);
    expect(puts()).toHaveLength(0);
    expect(api.members.get('m1@example.com')?.first_name).toBe('First1');
  });

  it('Ctrl-C during the update batches keeps the checkpoint; --resume updates the rest, none twice', async () => {
    const { dir, env } = await workspace();
    const controller = new AbortController();
    // The first batch is applied and answered; Ctrl-C while the second is on its way.
    onUpdate = (n) => {
      if (n === 1) return true;
      controller.abort();
      return false;
    };
    const args = ['members', 'import', 'members.csv', '--update', '--batch-size', '1', '--concurrency', '1'];
    const stopped = await runCli(args, { env, cwd: dir, signal: controller.signal });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain(
      'Continue with: loyalty members import members.csv --update --batch-size 1 --concurrency 1 --resume',
    );
    expect(puts()).toHaveLength(1);
    expect(await readdir(join(dir, 'loyalty', 'imports'))).toHaveLength(1);

    onUpdate = () => true;
    const resumed = await runCli([...args, '--resume', '--json'], { env, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ updated: 2, resumed_batches: 7 });
    expect(puts().map((r) => (r.body as { members: Array<{ first_name: string }> }).members[0]?.first_name)).toEqual([
      'Renamed1',
      'Renamed3',
    ]);
    expect(await readdir(join(dir, 'loyalty', 'imports'))).toHaveLength(0);
  });
});
