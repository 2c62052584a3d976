import { defined } from './defined.js';

/**
 * Date formats of the API (docs/decisions.md): RFC 3339 UTC with milliseconds for timestamps,
 * `YYYY-MM-DD HH:MM:SS` (UTC) for the fields the specification gives in that form, and
 * `YYYY-MM-DD` calendar dates for pass start and expiration dates.
 */

/** `2026-11-21 10:15:30` (UTC). */
export const formatDateTime = (date: Date): string => date.toISOString().slice(0, 19).replace('T', ' ');

/** `2026-11-21T10:15:30.000Z`. */
export const formatTimestamp = (date: Date): string => date.toISOString();

/** `2026-11-21` (UTC). */
export const formatDate = (date: Date): string => date.toISOString().slice(0, 10);

/** Today's date in UTC, `YYYY-MM-DD`. */
export const todayUtc = (now: Date = new Date()): string => formatDate(now);

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** True when year-month-day is a real calendar day (no `2026-02-30`). */
const isRealDay = (year: string, month: string, day: string): boolean => {
  const m = Number(month);
  const d = Number(day);
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(Number(year), m);
};

/** True for a real calendar date written `YYYY-MM-DD` (rejects `2026-02-30`). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return m !== null && isRealDay(defined(m[1], 'the year'), defined(m[2], 'the month'), defined(m[3], 'the day'));
}

/** `YYYY-MM-DD` plus `days` calendar days. */
export function addDays(ymd: string, days: number): string {
  const date = new Date(`${ymd}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return formatDate(date);
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * Reads an RFC 3339 date-time, or `YYYY-MM-DD HH:MM:SS` / `YYYY-MM-DDTHH:MM:SS` without an
 * offset (taken as UTC, the form this API writes). Null when it is neither.
 */
export function parseDateTime(value: string): Date | null {
  const m = DATE_TIME.exec(value.trim());
  if (!m || !isRealDay(defined(m[1], 'the year'), defined(m[2], 'the month'), defined(m[3], 'the day'))) return null;
  const date = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}${m[5] ?? ''}${m[6]?.toUpperCase() ?? 'Z'}`);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** SQL expressions for the same formats, for queries that build JSON in PostgreSQL. */
export const sqlFormats = {
  /** `to_char(<timestamptz> AT TIME ZONE 'UTC', …)` → `YYYY-MM-DD HH:MM:SS`. */
  dateTime: `'YYYY-MM-DD HH24:MI:SS'`,
  /** → `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  timestamp: `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`,
} as const;
