import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../errors.js';
import { tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { runImport, type ImportRequest } from './run.js';
import type { SendSignups, SignupAnswer } from './send-signups.js';

/** A stand-in for POST /members/signups with idempotency keys, like the real API. */
function fakeSignupsApi(options: { rejectEmail?: (email: string) => string | undefined } = {}) {
  const members = new Map<string, string>();
  const stored = new Map<string, { body: string; answer: SignupAnswer }>();
  const calls: Array<{ key: string; emails: string[] }> = [];
  let created = 0;
  const send: SendSignups = async (users, { idempotencyKey, signal }) => {
    signal.throwIfAborted();
    calls.push({ key: idempotencyKey, emails: users.map((u) => u.email) });
    const body = JSON.stringify(users);
    const replay = stored.get(idempotencyKey);
    if (replay) {
      if (replay.body !== body) throw new Error('idempotency_key_reuse');
      return replay.answer;
    }
    const rowErrors = new Map<number, string>();
    users.forEach((user, i) => {
      const error = options.rejectEmail?.(user.email);
      if (error) rowErrors.set(i, error);
    });
    if (rowErrors.size > 0) return { ok: false, message: 'The given data was invalid.', rowErrors };
    let fresh = 0;
    for (const user of users) {
      const key = user.email.toLowerCase();
      if (!members.has(key)) {
        members.set(key, `id-${++created}`);
        fresh += 1;
      }
    }
    const answer: SignupAnswer = { ok: true, new: fresh, found: users.length - fresh };
    stored.set(idempotencyKey, { body, answer });
    return answer;
  };
  return { send, members, calls };
}

async function* text(content: string): AsyncGenerator<Buffer> {
  yield Buffer.from(content);
}

function csvOf(count: number, extra: string[] = []): string {
  const lines = ['email,first_name,last_name'];
  for (let i = 0; i < count; i++) lines.push(`member${i}@example.com,First${i},Last${i}`);
  return `${[...lines, ...extra].join('\n')}\n`;
}

async function setup() {
  const dir = await tempConfigHome();
  const base = (content: string, send: SendSignups, extra: Partial<ImportRequest> = {}): ImportRequest => ({
    input: { name: join(dir, 'members.csv'), chunks: text(content), format: 'csv' },
    brandId: 'brand-acme',
    apiUrl: 'http://127.0.0.1:3000',
    configDir: join(dir, 'config'),
    batchSize: 10,
    concurrency: 2,
    signal: new AbortController().signal,
    sendSignups: send,
    now: () => new Date('2026-06-01T00:00:00Z'),
    ...extra,
  });
  return { dir, base };
}

describe('runImport', () => {
  it('imports every valid row once and counts new and found members', async () => {
    const { base } = await setup();
    const api = fakeSignupsApi();
    await api.send([{ email: 'member3@example.com' }], {
      idempotencyKey: 'earlier',
      signal: new AbortController().signal,
    });
    const summary = await runImport(base(csvOf(25), api.send));
    expect(summary).toMatchObject({ rows: 25, batches: 3, new: 24, found: 1, rejected: 0, rejects_file: null });
    expect(api.calls.slice(1).map((call) => call.emails.length)).toEqual([10, 10, 5]);
    expect(api.members.size).toBe(25);
  });

  it('validates every row before sending anything, and --dry-run stops there', async () => {
    const { base, dir } = await setup();
    const api = fakeSignupsApi();
    const summary = await runImport(base(csvOf(5, ['broken-address,X,Y']), api.send, { dryRun: true }));
    expect(api.calls).toEqual([]);
    expect(summary).toMatchObject({
      dry_run: true,
      rows: 6,
      rejected: 1,
      rejects_file: join(dir, 'members.rejects.csv'),
    });
    expect(parse(await readFile(join(dir, 'members.rejects.csv'), 'utf8'))).toEqual([
      ['email', 'first_name', 'last_name', 'error'],
      ['broken-address', 'X', 'Y', 'line 7: "broken-address" is not an e-mail address'],
    ]);
  });

  it('writes rows the API rejects to the rejects file and still imports the rest of their batch', async () => {
    const { base, dir } = await setup();
    const api = fakeSignupsApi({
      rejectEmail: (email) =>
        email === 'member4@example.com' ? 'The users.4.email must be a valid email address.' : undefined,
    });
    const summary = await runImport(base(csvOf(12, ['member0@example.com,Dup,Row']), api.send));
    expect(summary).toMatchObject({ new: 11, found: 0, rejected: 2, rejected_by_api: 1, rejected_invalid: 1 });
    expect(api.members.has('member4@example.com')).toBe(false);
    const rejects = parse(await readFile(join(dir, 'members.rejects.csv'), 'utf8')) as string[][];
    expect(rejects.map((row) => row[3])).toEqual([
      'error',
      'line 6: rejected by the API: The users.4.email must be a valid email address.',
      'line 14: duplicate of member0@example.com on line 2',
    ]);
  });

  it('after Ctrl-C, --resume sends only unacknowledged batches with the same keys and creates nobody twice', async () => {
    const { base, dir } = await setup();
    const api = fakeSignupsApi();
    const controller = new AbortController();
    let acknowledged = 0;
    const interrupting: SendSignups = async (users, options) => {
      const answer = await api.send(users, options);
      // The third request reaches the server, but Ctrl-C comes before its answer is checkpointed.
      if (++acknowledged === 3) {
        controller.abort();
        options.signal.throwIfAborted();
      }
      return answer;
    };
    const content = csvOf(95, ['nope,,']);
    const first = runImport(base(content, interrupting, { signal: controller.signal, concurrency: 1 }));
    await expect(first).rejects.toMatchObject({
      exitCode: ExitCode.interrupted,
      hint: expect.stringContaining('--resume'),
    });
    expect(await readdir(join(dir, 'config', 'imports'))).toHaveLength(1);

    const again = runImport(base(content, api.send));
    await expect(again).rejects.toThrow(/unfinished import of this file exists \(2 of 10 batches sent\)/);

    const keysBefore = api.calls.map((call) => call.key);
    const summary = await runImport(base(content, api.send, { resume: true }));
    const resent = api.calls.slice(keysBefore.length);
    expect(resent).toHaveLength(8);
    expect(resent[0]!.key).toBe(keysBefore[2]); // the unacknowledged batch, replayed under its key
    expect(summary).toMatchObject({ new: 95, found: 0, rejected: 1, resumed_batches: 2 });
    expect(api.members.size).toBe(95);
    expect(await readdir(join(dir, 'config', 'imports'))).toEqual([]);
  });

  it('refuses to resume with columns read differently (an opt-out column skipped), which would drop consent from the rest', async () => {
    const { base } = await setup();
    const api = fakeSignupsApi();
    let calls = 0;
    const failing: SendSignups = async (users, options) => {
      if (++calls === 2) throw new CliError('Cannot reach the API at http://127.0.0.1:3000.');
      return api.send(users, options);
    };
    const lines = ['email,Vorname,Abgemeldet'];
    for (let i = 0; i < 30; i++) lines.push(`member${i}@example.com,First${i},${i % 2 ? 'ja' : 'nein'}`);
    const content = `${lines.join('\n')}\n`;
    const mapping = { first_name: 'Vorname', unsubscribed: 'Abgemeldet' };
    await expect(runImport(base(content, failing, { concurrency: 1, mapping }))).rejects.toThrow(/Cannot reach/);
    const before = api.calls.length;
    const skipping = runImport(
      base(content, api.send, { mapping: { first_name: 'Vorname' }, skipColumns: ['Abgemeldet'], resume: true }),
    );
    await expect(skipping).rejects.toMatchObject({
      exitCode: ExitCode.usage,
      message: expect.stringMatching(/differently.*"Abgemeldet": unsubscribed then, not read now/),
    });
    expect(api.calls.length).toBe(before);
    const summary = await runImport(base(content, api.send, { mapping, resume: true }));
    expect(summary).toMatchObject({ new: 30, resumed_batches: 1 });
  });

  it('keeps the checkpoint and says how to continue when the API fails', async () => {
    const { base, dir } = await setup();
    const api = fakeSignupsApi();
    let calls = 0;
    const failing: SendSignups = async (users, options) => {
      if (++calls === 2) throw new CliError('Cannot reach the API at http://127.0.0.1:3000.');
      return api.send(users, options);
    };
    const logs: string[] = [];
    await expect(runImport(base(csvOf(30), failing, { concurrency: 1, log: (m) => logs.push(m) }))).rejects.toThrow(
      /Cannot reach/,
    );
    expect(logs.join('\n')).toMatch(/Progress is saved \(1 of 3 batches\).*--resume/);
    const summary = await runImport(base(csvOf(30), api.send, { resume: true }));
    expect(summary).toMatchObject({ new: 30, resumed_batches: 1 });
    expect(await readdir(join(dir, 'config', 'imports'))).toEqual([]);
  });

  it('leaves no checkpoint when nothing was acknowledged, so the next run starts without --resume', async () => {
    const { base, dir } = await setup();
    const api = fakeSignupsApi();
    const down: SendSignups = async () => {
      throw new CliError('Cannot reach the API at http://127.0.0.1:3000 (ECONNREFUSED).');
    };
    const logs: string[] = [];
    await expect(runImport(base(csvOf(30), down, { log: (m) => logs.push(m) }))).rejects.toThrow(/Cannot reach/);
    expect(logs.join('\n')).not.toMatch(/--resume/);
    expect(logs.join('\n')).toMatch(/Nothing was imported/);
    expect(await readdir(join(dir, 'config', 'imports')).catch(() => [])).toEqual([]);

    const controller = new AbortController();
    const interrupted: SendSignups = async (_users, options) => {
      controller.abort();
      options.signal.throwIfAborted();
      throw new Error('not reached');
    };
    await expect(runImport(base(csvOf(30), interrupted, { signal: controller.signal }))).rejects.toMatchObject({
      exitCode: ExitCode.interrupted,
      message: expect.stringMatching(/before any batch was acknowledged/),
    });
    expect(await readdir(join(dir, 'config', 'imports')).catch(() => [])).toEqual([]);

    const summary = await runImport(base(csvOf(30), api.send));
    expect(summary).toMatchObject({ new: 30, resumed_batches: 0 });
  });

  it.each([
    [
      'an unread consent-looking column',
      'email,Newsletter-Abmeldung am\na@example.com,2024-01-01\n',
      /"Newsletter-Abmeldung am" looks like consent/,
    ],
    [
      'an unread column that says "unsubscribed"',
      'email,Status\na@example.com,active\nb@example.com,Unsubscribed\n',
      /The column "Status" says "Unsubscribed" on line 3 but is not read; nothing was sent\./,
    ],
    [
      'a consent column without a yes or a no',
      'email,Newsletter\na@example.com,weekly\nb@example.com,monthly\n',
      /"Newsletter" is read as consent \(subscribed\), but none of its values is a yes or a no \("weekly" on line 2, "monthly" on line 3\)/,
    ],
  ])('stops at %s before anything is sent: exit 2, no rejects file, no checkpoint', async (_what, content, message) => {
    const { base, dir } = await setup();
    const api = fakeSignupsApi();
    const run = runImport(base(content, api.send));
    await expect(run).rejects.toMatchObject({ exitCode: ExitCode.usage, message: expect.stringMatching(message) });
    expect(api.calls).toEqual([]);
    expect(await readdir(dir)).not.toContain('members.rejects.csv');
    expect(await readdir(join(dir, 'config', 'imports')).catch(() => [])).toEqual([]);
  });

  it('reads a German Excel opt-out column ("Abgemeldet": ja, yes) as unsubscribed', async () => {
    const { base } = await setup();
    const sent: Array<Record<string, unknown>> = [];
    const api = fakeSignupsApi();
    const recording: SendSignups = async (users, options) => {
      sent.push(...users);
      return api.send(users, options);
    };
    const content =
      '\uFEFFE-Mail;Vorname;Nachname;Abgemeldet;Anmeldedatum\r\n' +
      'a@example.de;Anna;Schmidt;ja;2024-05-01\r\nb@example.de;Bernd;Meier;nein;\r\nc@example.de;Clara;Wolf;yes;\r\n';
    await runImport(base(content, recording));
    expect(sent).toEqual([
      {
        email: 'a@example.de',
        first_name: 'Anna',
        last_name: 'Schmidt',
        unsubscribed: true,
        subscribed_at: '2024-05-01T00:00:00Z',
      },
      { email: 'b@example.de', first_name: 'Bernd', last_name: 'Meier', unsubscribed: false },
      { email: 'c@example.de', first_name: 'Clara', last_name: 'Wolf', unsubscribed: true },
    ]);
  });

  it('reports progress up to the last batch', async () => {
    const { base } = await setup();
    const api = fakeSignupsApi();
    const seen: Array<[string, number, number]> = [];
    await runImport(
      base(csvOf(20), api.send, { concurrency: 1, onProgress: (p) => seen.push([p.phase, p.batchesDone, p.rowsDone]) }),
    );
    expect(seen.at(-1)).toEqual(['done', 2, 20]);
    expect(seen.some(([phase, done]) => phase === 'sending' && done === 1)).toBe(true);
  });
});
