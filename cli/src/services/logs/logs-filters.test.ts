import { describe, expect, it } from 'vitest';
import { palette } from '../../output.js';
import { logQueryOf, sinceOf } from './logs-filters.js';
import { logLine } from './logs-print.js';

describe('logs filters', () => {
  const now = Date.parse('2026-11-28T10:00:00Z');

  it('turns the flags into the query of GET /request-logs', () => {
    expect(
      logQueryOf(
        { status: '4XX', method: 'post', path: '/members', requestId: 'abc-1', since: '10m', organization: 'org-acme' },
        now,
      ),
    ).toEqual({
      status: '4xx',
      method: 'POST',
      path: '/members',
      request_id: 'abc-1',
      since: '2026-11-28T09:50:00.000Z',
      organization_id: 'org-acme',
    });
    expect(logQueryOf({ status: '404' })).toEqual({ status: '404' });
  });

  it('takes every method the request log records, HEAD included, in any case', () => {
    for (const method of ['get', 'HEAD', 'head', 'Post', 'PUT', 'patch', 'DELETE'])
      expect(logQueryOf({ method }).method).toBe(method.toUpperCase());
  });

  it('reads durations and ISO date-times for --since', () => {
    expect(sinceOf('30s', now)).toBe('2026-11-28T09:59:30.000Z');
    expect(sinceOf('2h', now)).toBe('2026-11-28T08:00:00.000Z');
    expect(sinceOf('1d', now)).toBe('2026-11-27T10:00:00.000Z');
    expect(sinceOf('2026-11-27T08:00:00Z', now)).toBe('2026-11-27T08:00:00.000Z');
  });

  it.each([
    [{ status: '4x' }, /--status 4x/],
    [{ status: '600' }, /--status 600/],
    [{ method: 'FETCH' }, /--method FETCH/],
    [{ path: 'members' }, /--path members/],
    [{ requestId: 'a@b' }, /--request-id a@b/],
    [{ since: 'yesterday' }, /--since yesterday/],
  ])('a bad flag %o is a usage error naming it', (options, message) => {
    expect(() => logQueryOf(options)).toThrow(message);
    try {
      logQueryOf(options);
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(2);
    }
  });

  it('prints one line per request: time, status, method, route, duration, request id, error code', () => {
    const line = logLine(
      {
        id: '1.1',
        created_at: '2026-11-28T10:15:30.120Z',
        method: 'POST',
        route: '/members',
        status: 422,
        duration_ms: 12,
        request_id: 'req-1',
        client_id: 'acme-admin',
        error_code: 'validation_failed',
      },
      palette(false),
    );
    expect(line).toBe('2026-11-28 10:15:30Z  422  POST    /members  12 ms  req-1  validation_failed');
    const coloured = logLine(
      {
        ...JSON.parse('{}'),
        created_at: '2026-11-28T10:15:30.120Z',
        method: 'GET',
        route: '/tags',
        status: 503,
        duration_ms: 1,
        request_id: 'r',
        error_code: null,
      },
      palette(true),
    );
    expect(coloured).toContain('\u001b[31m503\u001b[39m');
  });
});
