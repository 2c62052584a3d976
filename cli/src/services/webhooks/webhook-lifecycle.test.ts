import { describe, expect, it } from 'vitest';
import { closestEventType } from './webhooks.js';
import { parseTime } from './webhook-lifecycle.js';

describe('parseTime (--since, --until)', () => {
  const now = Date.parse('2026-11-24T12:00:00.000Z');
  it('reads durations ago and ISO times', () => {
    expect(parseTime('--since', '90s', now)).toBe('2026-11-24T11:58:30.000Z');
    expect(parseTime('--since', '30m', now)).toBe('2026-11-24T11:30:00.000Z');
    expect(parseTime('--since', '2h', now)).toBe('2026-11-24T10:00:00.000Z');
    expect(parseTime('--since', '7d', now)).toBe('2026-11-17T12:00:00.000Z');
    expect(parseTime('--since', '1W', now)).toBe('2026-11-17T12:00:00.000Z');
    expect(parseTime('--since', '2026-11-23T06:00:00+01:00', now)).toBe('2026-11-23T05:00:00.000Z');
  });
  it('refuses anything else, naming the flag', () => {
    for (const bad of ['', '2', 'h', '-2h', 'yesterday', '2026-13-45', '2h ago']) {
      expect(() => parseTime('--until', bad, now), bad).toThrow(/^--until must be a duration ago/);
    }
  });
});

describe('closestEventType', () => {
  it('suggests the type a typo meant, and nothing for an unrelated name', () => {
    expect(closestEventType('member.create')).toBe('member.created');
    expect(closestEventType('Coupon.Redeem')).toBe('coupon.redeemed');
    expect(closestEventType('points.change')).toBe('points.changed');
    expect(closestEventType('member.deleted')).toBe('member.created');
    expect(closestEventType('invoice.paid')).toBeUndefined();
  });
});
