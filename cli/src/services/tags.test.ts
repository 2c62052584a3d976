import { describe, expect, it } from 'vitest';
import { loggedInEnv, type FakeApi, fakeApiServer, addMembers } from '../testing/fake-api.js';
import { runCli, tempConfigHome } from '../testing/run-cli.js';
import { parseMemberReferences } from './tags.js';

let api: FakeApi;
fakeApiServer({
  each: (fresh) => {
    api = fresh;
    addMembers(api, 3000);
  },
});

describe('parseMemberReferences', () => {
  it('takes the first UUID (else e-mail) of each line, skips a header, de-duplicates', () => {
    const refs = parseMemberReferences(
      [
        'identifier,email,full_name',
        '00000000-0000-4000-9000-000000000001,m1@example.com,Ann',
        'M2@example.com',
        'm2@example.com',
        '"m3@example.com";x',
        'garbage',
        '',
      ].join('\n'),
    );
    expect(refs.uuids).toEqual(['00000000-0000-4000-9000-000000000001']);
    expect(refs.emails).toEqual(['M2@example.com', 'm3@example.com']);
    expect(refs.invalid).toEqual([{ line: 6, text: 'garbage' }]);
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
