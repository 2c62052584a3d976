import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { expirationDate, voucherBody } from './vouchers.js';

const server = fakeApiServer();

const JOB = '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d';
const snapshot = (status: string, processed: number, extra: Record<string, unknown> = {}) => ({
  success: true,
  job_id: JOB,
  status,
  total: status === 'queued' ? 0 : 10,
  processed,
  issued: processed,
  skipped: 0,
  failed: 0,
  has_errors: false,
  started_at: status === 'queued' ? null : '2026-11-21 10:00:00',
  finished_at: status === 'done' ? '2026-11-21 10:00:05' : null,
  ...extra,
});

function jobApi(sequence: Array<Record<string, unknown>>) {
  const created: unknown[] = [];
  let polls = 0;
  server.use(
    http.post(`${API}/tags/:id/vouchers`, async ({ request, params }) => {
      created.push({ tag: params.id, body: await request.json() });
      return HttpResponse.json({ ...snapshot('queued', 0), already_running: false }, { status: 202 });
    }),
    http.get(`${API}/tags/:id/vouchers/:job`, ({ request }) => {
      expect(new URL(request.url).searchParams.get('brand_id')).toBe('brand-acme');
      return HttpResponse.json(sequence[Math.min(polls++, sequence.length - 1)]!);
    }),
  );
  return { created, polls: () => polls };
}

describe('voucher request body', () => {
  it('sends exactly one of coupon and storecard, and "never" as no-date', () => {
    expect(voucherBody('b', { coupon: 'c', expires: 'never' })).toEqual({
      brand_id: 'b',
      coupon_id: 'c',
      expiration_date: 'no-date',
    });
    expect(voucherBody('b', { storecard: 's' })).toEqual({ brand_id: 'b', storecard_id: 's' });
    expect(() => voucherBody('b', { coupon: 'c', storecard: 's' })).toThrow(/exactly one/);
    expect(() => voucherBody('b', {})).toThrow(/exactly one/);
    expect(() => expirationDate('31.12.2026')).toThrow(/YYYY-MM-DD/);
  });
});

describe('loyalty vouchers issue', { timeout: 20_000 }, () => {
  it('without --wait prints the job id', async () => {
    const api = jobApi([]);
    const result = await runCli(
      ['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-welcome', '--expires', '2026-12-31'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${JOB}\n`);
    expect(api.created).toEqual([
      { tag: 'vip', body: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '2026-12-31' } },
    ]);
    expect(result.stderr).toContain(`loyalty vouchers status ${JOB} --tag vip --wait`);
  });

  it('with --wait follows the job to the end, with progress lines when not on a terminal', async () => {
    const api = jobApi([snapshot('running', 3), snapshot('running', 7), snapshot('done', 10)]);
    const result = await runCli(
      ['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-welcome', '--wait', '--json'],
      { env: loggedInEnv(await tempConfigHome()) },
    );
    expect(result.code).toBe(0);
    expect(api.polls()).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', processed: 10, issued: 10 });
    expect(result.stderr).toContain(`job ${JOB} queued: 0/0 members`);
    expect(result.stderr).toMatch(/job \S+ done: 10\/10 members \(100%\), issued 10, skipped 0, failed 0/);
  }, 15_000);

  it('exits 3 when some members failed and 1 when the job failed', async () => {
    jobApi([snapshot('done', 10, { issued: 8, failed: 2, has_errors: true })]);
    const partial = await runCli(['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-welcome', '--wait'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(partial.code).toBe(3);
    expect(partial.stderr).toContain('2 members did not get the voucher.');
    jobApi([snapshot('failed', 0)]);
    const failed = await runCli(['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-retired', '--wait'], {
      env: loggedInEnv(await tempConfigHome()),
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('failed: the coupon or storecard is no longer available');
  });

  it('stops following on Ctrl-C with exit 130 and says how to follow again', async () => {
    jobApi([snapshot('running', 1)]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 700);
    const result = await runCli(['vouchers', 'issue', '--tag', 'vip', '--coupon', 'coupon-welcome', '--wait'], {
      env: loggedInEnv(await tempConfigHome()),
      signal: controller.signal,
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('it keeps running on the server');
  });
});
