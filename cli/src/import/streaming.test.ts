// An import of any length runs in flat memory: nothing holds the rows (issue 18).
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { retainedBytes } from '#test-helpers/cli-unit/retained.js';
import { tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { type ImportRequest, runImport } from './run.js';
import type { SendSignups } from './send-signups.js';

/** `rows` CSV rows made as they are read, every `badEvery`th (0: none) with an address that is not one. */
function generated(rows: number, badEvery: number, counter = { rows: 0 }) {
  return (async function* () {
    yield Buffer.from('email,first_name,last_name\n');
    const lines: string[] = [];
    for (let i = 0; i < rows; i++) {
      counter.rows = i + 1;
      lines.push(`${badEvery > 0 && i % badEvery === 0 ? `bad${i}` : `member${i}@example.com`},First${i},Last${i}`);
      if (lines.length === 500) yield Buffer.from(`${lines.splice(0).join('\n')}\n`);
    }
    if (lines.length) yield Buffer.from(`${lines.join('\n')}\n`);
  })();
}

async function request(extra: Partial<ImportRequest>): Promise<ImportRequest> {
  const dir = await tempConfigHome();
  return {
    input: { name: join(dir, 'members.csv'), chunks: generated(0, 1), format: 'csv' },
    brandId: 'brand-acme',
    apiUrl: 'http://127.0.0.1:3000',
    configDir: join(dir, 'config'),
    cwd: dir,
    batchSize: 2000,
    concurrency: 2,
    signal: new AbortController().signal,
    sendSignups: async (users) => ({ ok: true, new: users.length, found: 0 }),
    ...extra,
  };
}

describe('import in flat memory', { timeout: 60_000 }, () => {
  it('checks 300,000 rows and writes their 100,000 rejects without holding rows', async () => {
    const samples: Promise<number>[] = [];
    const before = await retainedBytes();
    const base = await request({});
    const summary = await runImport({
      ...base,
      input: { ...base.input, chunks: generated(300_000, 3), reopen: async () => generated(300_000, 3) },
      dryRun: true,
      onProgress: (progress) => {
        if (progress.rows % 50_000 === 0) samples.push(retainedBytes().then((bytes) => bytes - before));
      },
    });
    expect(summary).toMatchObject({ rows: 300_000, rejected: 100_000, dry_run: true });
    const rejects = await readFile(join(base.cwd ?? '', 'members.rejects.csv'), 'utf8');
    expect(rejects.split('\n')).toHaveLength(100_002);
    expect(rejects.split('\n')[1]).toBe(`bad0,First0,Last0,"line 2: ""bad0"" is not an e-mail address"`);
    // Held, 300,000 rows of fields would be ~100 MB; the e-mail hashes take 1 MB.
    expect(Math.max(...(await Promise.all(samples)))).toBeLessThan(16 * 1024 * 1024);
  });

  it('reads the input for sending only as far as the batches in flight and the one being filled', async () => {
    const second = { rows: 0 };
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const calls: number[] = [];
    const sendSignups: SendSignups = async (users) => {
      calls.push(users.length);
      await gate;
      return { ok: true, new: users.length, found: 0 };
    };
    const base = await request({ sendSignups, batchSize: 1000, concurrency: 2 });
    const running = runImport({
      ...base,
      input: { ...base.input, chunks: generated(50_000, 0), reopen: async () => generated(50_000, 0, second) },
    });
    await vi.waitFor(() => expect(calls).toHaveLength(2), { timeout: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 200)); // time to read on, if it would
    expect(calls).toEqual([1000, 1000]); // two in flight, waiting for answers
    // Two batches sent, a third filled, the row that would start a fourth, and what the stream
    // buffers ahead of the parser (a few chunks); not the 50,000 rows of the file.
    expect(second.rows).toBeLessThan(3 * 1000 + 1 + 16 * 500);
    release();
    const summary = await running;
    expect(summary).toMatchObject({ rows: 50_000, new: 50_000, batches: 50 });
  });

  it('copies stdin to a private file for the second reading and removes it afterwards', async () => {
    const base = await request({});
    const summary = await runImport({ ...base, input: { ...base.input, chunks: generated(5_000, 0) } });
    expect(summary).toMatchObject({ rows: 5_000, new: 5_000 });
    await expect(stat(join(base.cwd ?? '', 'members.rejects.csv'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
