import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { API, loggedInEnv, type FakeApi, fakeApiServer, addMembers } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { memberReference } from './tags.js';

let api: FakeApi;
const server = fakeApiServer({
  each: (fresh) => {
    api = fresh;
    addMembers(api, 3000);
  },
});

describe('memberReference', () => {
  it('takes the first UUID of a line, else its first e-mail, in plain lists and CSVs', () => {
    expect(memberReference('00000000-0000-4000-9000-000000000001,m1@example.com,Ann')).toEqual({
      uuid: '00000000-0000-4000-9000-000000000001',
    });
    expect(memberReference('M2@example.com')).toEqual({ email: 'M2@example.com' });
    expect(memberReference('"m3@example.com";x')).toEqual({ email: 'm3@example.com' });
    expect(memberReference('identifier,email,full_name')).toBeUndefined();
    expect(memberReference('garbage')).toBeUndefined();
  });
});

describe('loyalty tags add-members', { timeout: 20_000 }, () => {
  it('resolves e-mails to UUIDs and adds everyone in chunks of 2000', async () => {
    const emails = Array.from({ length: 2600 }, (_, i) => `m${i}@example.com`);
    const result = await runCli(['tags', 'add-members', 'vip', '--file', '-', '--json'], {
      env: loggedInEnv(await tempConfigHome()),
      stdin: emails.join('\n'),
    });
    expect(result.code).toBe(0);
    expect(
      api.requests.filter((r) => r.path === '/members/uuid').map((r) => (r.body as { emails: string[] }).emails.length),
    ).toEqual([2000, 600]);
    expect(
      api.requests
        .filter((r) => r.path === '/tags/members/bulk')
        .map((r) => (r.body as { users: string[] }).users.length),
    ).toEqual([2000, 600]);
    expect(api.tagMembers.get('vip')?.size).toBe(2600);
    expect(JSON.parse(result.stdout)).toMatchObject({ tag: 'vip', sent: 2600, unknown_emails: [] });
  });

  it('reads a file line by line: skips its header, counts unreadable lines, sends repeats once per chunk', async () => {
    const lines = ['email,full_name'];
    for (let i = 0; i < 4500; i++) lines.push(`m${i % 2500}@example.com,Name ${i}`); // 2000 repeats
    lines.splice(3000, 0, 'no address here');
    const result = await runCli(['tags', 'add-members', 'vip', '--file', '-', '--json'], {
      env: loggedInEnv(await tempConfigHome()),
      stdin: `${lines.join('\n')}\n`,
    });
    expect(result.code).toBe(3);
    const lookups = api.requests.filter((r) => r.path === '/members/uuid');
    // Chunks of 2000 lines as read; within a chunk each e-mail is looked up once.
    expect(lookups.map((r) => (r.body as { emails: string[] }).emails.length)).toEqual([2000, 2000, 500]);
    expect(api.tagMembers.get('vip')?.size).toBe(2500);
    expect(JSON.parse(result.stdout)).toMatchObject({
      sent: 4500,
      unknown_email_count: 0,
      invalid_line_count: 1,
      invalid_lines: [{ line: 3001, text: 'no address here' }],
    });
  });

  it('goes on after a chunk the API refuses, and says how many members were not added', async () => {
    let calls = 0;
    server.use(
      http.post(`${API}/tags/members/bulk`, () => {
        calls += 1;
        if (calls === 2) return HttpResponse.json({ message: 'The given data was invalid.' }, { status: 422 });
        return undefined; // the fake API's own handler
      }),
    );
    const emails = Array.from({ length: 5000 }, (_, i) => `m${i % 3000}@example.com`);
    const result = await runCli(['tags', 'add-members', 'vip', '--file', '-'], {
      env: loggedInEnv(await tempConfigHome()),
      stdin: emails.join('\n'),
    });
    expect(calls).toBe(3);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('2,000 of 5,000 members were not added: The given data was invalid.');
    expect(result.stderr).toContain('Run the same command again: members already on the tag are skipped.');
  });

  it('adds the known members, names the unknown e-mails and exits 3', async () => {
    const result = await runCli(
      ['tags', 'add-members', 'vip', 'm1@example.com', 'ghost@example.com', '00000000-0000-4000-9000-000000000002'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code).toBe(3);
    expect(api.tagMembers.get('vip')?.size).toBe(2);
    expect(result.stderr).toContain('! not a member: ghost@example.com');
    expect(result.stderr).toContain(
      '! 1 not added: 1 e-mails are not members of brand-acme, 0 lines had no UUID or e-mail.',
    );
  });
});
