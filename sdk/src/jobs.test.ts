import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { components } from './generated/openapi.js';
import { VoucherJobTimeoutError, waitForVoucherJob } from './jobs.js';
import { api, clients, mswServer } from './test-support.js';

const server = mswServer();
afterEach(() => vi.useRealTimers());
const client = clients('jobs', false);

type Job = components['schemas']['VoucherJobStatus'];
const job = (status: Job['status'], processed: number): Job => ({
  success: true,
  job_id: 'job-1',
  status,
  total: 3,
  processed,
  issued: processed,
  skipped: 0,
  failed: 0,
  has_errors: false,
  started_at: status === 'queued' ? null : '2026-11-21 10:15:30',
  finished_at: status === 'done' ? '2026-11-21 10:15:33' : null,
});

function jobEndpoint(snapshots: Job[]) {
  const urls: URL[] = [];
  server.use(
    http.get(`${api}/tags/:id/vouchers/:job`, ({ request }) => {
      urls.push(new URL(request.url));
      return HttpResponse.json(snapshots.length > 1 ? snapshots.shift() : snapshots[0]);
    }),
  );
  return urls;
}

describe('waitForVoucherJob', () => {
  it('yields every snapshot and ends with the done one', async () => {
    const urls = jobEndpoint([job('queued', 0), job('running', 1), job('running', 2), job('done', 3)]);
    const seen = [];
    for await (const j of waitForVoucherJob(client(), {
      tagId: 'vip',
      jobId: 'job-1',
      brandId: 'brand-acme',
      intervalMs: 1,
    }))
      seen.push(`${j.status}:${j.processed}`);
    expect(seen).toEqual(['queued:0', 'running:1', 'running:2', 'done:3']);
    expect(urls[0]?.pathname).toBe('/tags/vip/vouchers/job-1');
    expect(urls[0]?.searchParams.get('brand_id')).toBe('brand-acme');
  });

  it('ends with a failed job', async () => {
    jobEndpoint([job('running', 0), { ...job('failed', 0), has_errors: true }]);
    const seen = [];
    for await (const j of waitForVoucherJob(client(), { tagId: 'vip', jobId: 'job-1', brandId: 'b', intervalMs: 1 }))
      seen.push(j.status);
    expect(seen).toEqual(['running', 'failed']);
  });

  it('polls at the interval', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const urls = jobEndpoint([job('queued', 0), job('running', 1), job('done', 3)]);
    const it = waitForVoucherJob(client(), { tagId: 'vip', jobId: 'job-1', brandId: 'b', intervalMs: 2000 });
    await it.next();
    const second = it.next();
    await vi.advanceTimersByTimeAsync(1999);
    expect(urls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await second).value).toMatchObject({ status: 'running' });
  });

  it('throws a typed timeout error with the last snapshot past the deadline', async () => {
    jobEndpoint([job('running', 1)]);
    const run = async () => {
      for await (const _ of waitForVoucherJob(client(), {
        tagId: 'vip',
        jobId: 'job-1',
        brandId: 'b',
        intervalMs: 10,
        deadlineMs: 35,
      }));
    };
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VoucherJobTimeoutError);
    expect(err).toMatchObject({ code: 'timeout', job: { status: 'running', processed: 1 } });
  });

  it('throws the LoyaltyError of a failed poll', async () => {
    server.use(
      http.get(`${api}/tags/:id/vouchers/:job`, () =>
        HttpResponse.json({ message: 'Not found.', error: 'not_found' }, { status: 404 }),
      ),
    );
    const run = async () => {
      for await (const _ of waitForVoucherJob(client(), { tagId: 'vip', jobId: 'nope', brandId: 'b' }));
    };
    await expect(run()).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it('stops waiting at once when aborted', async () => {
    jobEndpoint([job('running', 1)]);
    const controller = new AbortController();
    const started = Date.now();
    const run = async () => {
      for await (const _ of waitForVoucherJob(client(), {
        tagId: 'vip',
        jobId: 'job-1',
        brandId: 'b',
        intervalMs: 60_000,
        signal: controller.signal,
      }))
        setTimeout(() => controller.abort(new Error('cancelled')), 5);
    };
    await expect(run()).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
