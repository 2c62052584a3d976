import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError, ExitCode, InterruptedError } from '../../errors.js';
import { tempConfigHome } from '../../testing/run-cli.js';
import type { Scan } from './plan.js';
import { RowRefused, type PointsApi } from './api.js';
import { runPointsImport, type PointsImportRequest } from './run.js';

/** A stand-in for the API: members, one pass per member and storecard, scans recorded once per reference. */
function fakeLedger(emails: readonly string[]) {
  const members = emails.map((email, i) => ({ email, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
  const passes = new Map<string, { code: string; balance: number; refs: Set<string> }>();
  const scans: Array<Scan & { passCode: string; created: boolean }> = [];
  const hooks: { beforeScan?: (passCode: string) => void } = {};
  const api: PointsApi = {
    members: async () => members,
    passes: async (storecardId) => {
      const byEmail = new Map<string, string>();
      for (const m of members) {
        const pass = passes.get(`${m.uuid}/${storecardId}`);
        if (pass) byEmail.set(m.email, pass.code);
      }
      return byEmail;
    },
    balance: async (_uuid, code) => [...passes.values()].find((p) => p.code === code)?.balance ?? 0,
    issuePass: async (uuid, storecardId, signal) => {
      signal.throwIfAborted();
      const key = `${uuid}/${storecardId}`;
      if (!passes.has(key)) passes.set(key, { code: `STC-${passes.size}`, balance: 0, refs: new Set() });
      return passes.get(key)?.code ?? '';
    },
    scan: async (code, scan, signal) => {
      signal.throwIfAborted();
      hooks.beforeScan?.(code);
      const pass = [...passes.values()].find((p) => p.code === code);
      if (!pass) throw new RowRefused('not_found');
      if (pass.refs.has(scan.transaction_reference)) {
        scans.push({ ...scan, passCode: code, created: false });
        return { created: false, balance: pass.balance };
      }
      const balance = pass.balance + (scan.type === 'earn' ? scan.points : -scan.points);
      if (balance < 0) throw new RowRefused('insufficient_balance The balance of this storecard pass is too low.');
      pass.balance = balance;
      pass.refs.add(scan.transaction_reference);
      scans.push({ ...scan, passCode: code, created: true });
      return { created: true, balance };
    },
  };
  const balanceOf = (email: string, storecardId = 'card-points') => {
    const m = members.find((x) => x.email === email);
    return passes.get(`${m?.uuid}/${storecardId}`)?.balance;
  };
  return { api, scans, passes, hooks, balanceOf };
}

async function request(
  csv: string,
  api: PointsApi,
  over: Partial<PointsImportRequest> = {},
): Promise<PointsImportRequest> {
  const dir = over.configDir ?? (await tempConfigHome());
  return {
    input: {
      name: 'balances.csv',
      chunks: (async function* () {
        yield Buffer.from(csv);
      })(),
    },
    mode: 'add',
    brandId: 'brand-acme',
    apiUrl: 'http://api.test',
    configDir: dir,
    cwd: dir,
    concurrency: 3,
    signal: new AbortController().signal,
    api,
    ...over,
  };
}

const csvOf = (rows: Array<[string, number]>) =>
  `email,storecard,points\n${rows.map(([e, p]) => `${e},card-points,${p}`).join('\n')}\n`;
const emails = Array.from({ length: 450 }, (_, i) => `m${i}@example.org`);

describe('runPointsImport', () => {
  it('--set twice: the first run reaches every target, the second finds them reached and sends nothing', async () => {
    const ledger = fakeLedger(emails.slice(0, 5));
    const csv = csvOf([
      ['m0@example.org', 10],
      ['m1@example.org', 0],
      ['m2@example.org', 7],
    ]);
    const first = await runPointsImport(await request(csv, ledger.api, { mode: 'set' }));
    expect(first).toMatchObject({ created: 2, adjusted: 0, unchanged: 1, rejected: 0 });
    expect([
      ledger.balanceOf('m0@example.org'),
      ledger.balanceOf('m1@example.org'),
      ledger.balanceOf('m2@example.org'),
    ]).toEqual([10, undefined, 7]);
    const sent = ledger.scans.length;
    const second = await runPointsImport(await request(csv, ledger.api, { mode: 'set' }));
    expect(second).toMatchObject({ created: 0, adjusted: 0, unchanged: 3 });
    expect(ledger.scans.length).toBe(sent);
  });

  it('--set: a balance moved by a till between the plan and the scan is corrected to the target', async () => {
    const ledger = fakeLedger(['ada@example.org']);
    await runPointsImport(await request(csvOf([['ada@example.org', 50]]), ledger.api));
    let moved = false;
    ledger.hooks.beforeScan = (code) => {
      const pass = [...ledger.passes.values()].find((p) => p.code === code);
      if (pass && !moved) {
        moved = true;
        pass.balance += 5; // a till credit the plan did not see
      }
    };
    const run = await runPointsImport(await request(csvOf([['ada@example.org', 80]]), ledger.api, { mode: 'set' }));
    expect(run).toMatchObject({ adjusted: 1 });
    expect(ledger.balanceOf('ada@example.org')).toBe(80);
  });

  it('--add rerun: every scan is answered as recorded before, nothing is credited again', async () => {
    const ledger = fakeLedger(emails.slice(0, 3));
    const csv = csvOf([
      ['m0@example.org', 10],
      ['m0@example.org', -4],
      ['m1@example.org', 3],
    ]);
    expect(await runPointsImport(await request(csv, ledger.api))).toMatchObject({ created: 2, adjusted: 1 });
    expect(ledger.balanceOf('m0@example.org')).toBe(6);
    expect(await runPointsImport(await request(csv, ledger.api))).toMatchObject({
      created: 0,
      adjusted: 0,
      unchanged: 3,
    });
    expect(ledger.balanceOf('m0@example.org')).toBe(6);
    expect(ledger.scans.filter((s) => s.created)).toHaveLength(3);
  });

  it('--dry-run reads the plan and sends nothing', async () => {
    const ledger = fakeLedger(emails.slice(0, 3));
    const plan = await runPointsImport(
      await request(
        csvOf([
          ['m0@example.org', 10],
          ['nobody@example.org', 1],
        ]),
        ledger.api,
        { dryRun: true },
      ),
    );
    expect(plan).toMatchObject({ created: 1, adjusted: 0, unchanged: 0, rejected: 1, dry_run: true });
    expect(ledger.scans).toEqual([]);
    expect(ledger.passes.size).toBe(0);
  });

  it('interrupted half way, refused without --resume, resumed: each row credited exactly once', async () => {
    const ledger = fakeLedger(emails);
    const csv = csvOf(emails.map((e, i) => [e, 1 + (i % 9)]));
    const configDir = await tempConfigHome();
    const abort = new AbortController();
    ledger.hooks.beforeScan = () => {
      if (ledger.scans.length === 300) abort.abort();
    };
    await expect(
      runPointsImport(await request(csv, ledger.api, { configDir, signal: abort.signal, concurrency: 4 })),
    ).rejects.toThrow(InterruptedError);
    ledger.hooks.beforeScan = undefined;
    const between = ledger.scans.length;
    expect(between).toBeGreaterThanOrEqual(200);
    expect(between).toBeLessThan(emails.length);

    await expect(runPointsImport(await request(csv, ledger.api, { configDir }))).rejects.toThrow(CliError);
    const resumed = await runPointsImport(await request(csv, ledger.api, { configDir, resume: true }));
    expect(resumed.resumed_batches).toBeGreaterThanOrEqual(1);
    expect(resumed.created + resumed.adjusted + resumed.unchanged).toBe(emails.length);
    expect(ledger.scans.filter((s) => s.created)).toHaveLength(emails.length);
    emails.forEach((e, i) => {
      expect(ledger.balanceOf(e)).toBe(1 + (i % 9));
    });
  });

  it('says how to continue with the command as typed: its --map and --storecard, quoted for the shell, and --resume', async () => {
    const ledger = fakeLedger(emails);
    const csv = `Kunde,Punkte\n${emails.map((e, i) => `${e},${1 + (i % 9)}`).join('\n')}\n`;
    const abort = new AbortController();
    ledger.hooks.beforeScan = () => {
      if (ledger.scans.length === 300) abort.abort();
    };
    const typed = [
      'points',
      'import',
      'my balances.csv',
      '--map',
      'member=Kunde',
      '--map=points=Punkte',
      '--storecard',
      'card-points',
      '--restart',
    ];
    const run = runPointsImport(
      await request(csv, ledger.api, {
        mapping: { member: 'Kunde', points: 'Punkte' },
        defaultStorecard: 'card-points',
        signal: abort.signal,
        commandLine: typed,
      }),
    );
    await expect(run).rejects.toMatchObject({
      hint: "Continue with: loyalty points import 'my balances.csv' --map member=Kunde --map=points=Punkte --storecard card-points --resume",
    });
  });

  it('refuses to resume with another --map, which would credit the rest from another column', async () => {
    const ledger = fakeLedger(emails);
    const csv = `email,storecard,points,bonus\n${emails.map((e, i) => `${e},card-points,${1 + (i % 9)},100`).join('\n')}\n`;
    const configDir = await tempConfigHome();
    const abort = new AbortController();
    ledger.hooks.beforeScan = () => {
      if (ledger.scans.length === 300) abort.abort();
    };
    const first = { configDir, mapping: { points: 'points' } };
    await expect(
      runPointsImport(await request(csv, ledger.api, { ...first, signal: abort.signal, concurrency: 4 })),
    ).rejects.toThrow(InterruptedError);
    ledger.hooks.beforeScan = undefined;
    const between = ledger.scans.length;
    const plans: unknown[] = [];
    const other = runPointsImport(
      await request(csv, ledger.api, {
        configDir,
        mapping: { points: 'bonus' },
        resume: true,
        onPlan: (plan) => plans.push(plan),
      }),
    );
    await expect(other).rejects.toMatchObject({
      exitCode: ExitCode.usage,
      message: expect.stringMatching(/reads .* differently .*points: column "points" then, column "bonus" now/),
      hint: expect.stringContaining('--restart'),
    });
    expect(ledger.scans.length).toBe(between);
    expect(plans, 'refused before a plan read from the other column is shown').toEqual([]);
    await runPointsImport(await request(csv, ledger.api, { ...first, resume: true }));
    emails.forEach((e, i) => {
      expect(ledger.balanceOf(e)).toBe(1 + (i % 9));
    });
  });

  it('reads JSON Lines with member UUIDs and the --storecard default', async () => {
    const ledger = fakeLedger(emails.slice(0, 2));
    const [m0, m1] = (await ledger.api.members(new AbortController().signal)).map((m) => m.uuid);
    const jsonl = `{"member_id":"${m0}","points":12}\n{"member_id":"${m1?.toUpperCase()}","points":"3"}\n`;
    const summary = await runPointsImport(
      await request(jsonl, ledger.api, {
        input: {
          name: 'balances.jsonl',
          chunks: (async function* () {
            yield jsonl;
          })(),
        },
        defaultStorecard: 'card-points',
      }),
    );
    expect(summary).toMatchObject({ created: 2, rejected: 0 });
    expect([ledger.balanceOf('m0@example.org'), ledger.balanceOf('m1@example.org')]).toEqual([12, 3]);
  });

  it('writes rejected rows, the checker’s and the API’s, in input order with their reasons', async () => {
    const ledger = fakeLedger(emails.slice(0, 2));
    const dir = await tempConfigHome();
    const csv =
      'email,storecard,points\nm0@example.org,card-points,-5\nbad,card-points,1\nm1@example.org,card-points,2\n';
    const summary = await runPointsImport(await request(csv, ledger.api, { cwd: dir, configDir: dir }));
    expect(summary).toMatchObject({ rejected: 2, created: 1, rejects_file: 'balances.rejects.csv' });
    expect(await readFile(join(dir, 'balances.rejects.csv'), 'utf8')).toBe(
      'email,storecard,points,error\n' +
        'm0@example.org,card-points,-5,line 2: rejected by the API: insufficient_balance The balance of this storecard pass is too low.\n' +
        'bad,card-points,1,"line 3: ""bad"" is neither an e-mail address nor a member UUID"\n',
    );
  });
});
