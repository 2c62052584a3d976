import { describe, expect, it } from 'vitest';
import { addDays, formatDate, formatDateTime, isCalendarDate, parseDateTime } from './dates.js';

describe('dates', () => {
  const at = new Date('2026-11-21T10:15:30.123Z');

  it('formats the API forms in UTC', () => {
    expect(formatDateTime(at)).toBe('2026-11-21 10:15:30');
    expect(formatDate(at)).toBe('2026-11-21');
  });

  it('accepts real calendar dates only', () => {
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-13-01')).toBe(false);
    expect(isCalendarDate('2026-1-01')).toBe(false);
  });

  it('adds calendar days across months and years', () => {
    expect(addDays('2026-12-20', 30)).toBe('2027-01-19');
  });

  it('reads RFC 3339 and the YYYY-MM-DD HH:MM:SS form as UTC', () => {
    expect(parseDateTime('2026-11-21 10:15:30')?.toISOString()).toBe('2026-11-21T10:15:30.000Z');
    expect(parseDateTime('2026-11-21T12:15:30+02:00')?.toISOString()).toBe('2026-11-21T10:15:30.000Z');
    expect(parseDateTime('2026-11-21T10:15:30.5Z')?.toISOString()).toBe('2026-11-21T10:15:30.500Z');
    expect(parseDateTime('2026-02-30 10:00:00')).toBeNull();
    expect(parseDateTime('yesterday')).toBeNull();
  });
});
