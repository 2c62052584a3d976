// Validates import rows before anything is sent, with the rules of POST /members/signups: the
// users item schema of openapi.yaml (cli/src/generated/signup-user.ts, generated from it by
// `npm run gen` as Ajv standalone code with the server's options), plus what the document says
// in words: subscribed_at is earlier than now. The forms people put in spreadsheets (yes/no,
// dates without a time or offset) are read into the API's forms first; what cannot be read is
// left as it is for the schema to reject. An e-mail may appear only once per file (seen-emails.ts).
import { validateSignupUser, type SchemaError, type SignupUser } from '../generated/signup-user.js';
import type { MemberFields } from './columns.js';
import { readConsentCell, unsubscribedBy } from './yes-no.js';

export type { SignupUser };

export type RowVerdict = { ok: true; user: SignupUser } | { ok: false; error: string };

/** A yes/no cell in any of the import's languages (yes-no.ts): true, false, undefined when empty. */
export function parseBooleanish(value: unknown): boolean | undefined | 'invalid' {
  const cell = readConsentCell(value);
  if (cell.kind === 'answer') return cell.yes;
  return cell.kind === 'empty' ? undefined : 'invalid';
}

/**
 * Whether the row's member is unsubscribed: by an opt-out column, an opt-in column (inverted), or
 * both (unsubscribed when either says so: an opt-out is never lost). `invalid` names the field
 * whose value is neither yes nor no.
 */
function consentOf(fields: MemberFields): { unsubscribed?: boolean; invalid?: 'unsubscribed' | 'subscribed' } {
  const optOut = 'unsubscribed' in fields ? unsubscribedBy(fields.unsubscribed, false) : undefined;
  const optIn = 'subscribed' in fields ? unsubscribedBy(fields.subscribed, true) : undefined;
  if (optOut === 'invalid') return { invalid: 'unsubscribed' };
  if (optIn === 'invalid') return { invalid: 'subscribed' };
  if (optOut === undefined && optIn === undefined) return {};
  return { unsubscribed: optOut === true || optIn === true };
}

/** A full name split at its last space: "Anna Maria Schmidt" → Anna Maria, Schmidt. */
function splitName(value: unknown): { first_name?: unknown; last_name?: unknown } {
  if (typeof value !== 'string') return value === undefined || value === null ? {} : { first_name: value };
  const name = value.trim().replace(/\s+/g, ' ');
  const at = name.lastIndexOf(' ');
  return at < 0 ? { first_name: name } : { first_name: name.slice(0, at), last_name: name.slice(at + 1) };
}

// 2024-05-01, 2024-05-01 10:00:00, 2024-05-01T10:00:00Z, 2024-05-01T10:00:00.123+02:00
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses the date-time forms people put in spreadsheets. Without an offset the time is UTC
 * (the API's `YYYY-MM-DD HH:MM:SS` fields are UTC). Returns undefined when it is not a real date.
 */
export function parseDateTime(text: string): Date | undefined {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(-2));
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  // Numbers, not a string for Date to parse: this runs twice a row of an import (issue 17's profile).
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // Date.UTC would read years 0-99 as 1900-1999
  date.setUTCHours(
    Number(hour),
    Number(minute) - offsetMinutes,
    Number(second),
    Number(fraction.slice(1, 4).padEnd(3, '0')),
  );
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const daysInMonth = (year: number, month: number): number =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * The wire form of subscribed_at: RFC 3339 in UTC, milliseconds only when there are any. Built
 * from the numbers: toISOString() and trimming it took 4x as long, twice a row of an import.
 */
export const formatSubscribedAt = (date: Date): string => {
  const year = date.getUTCFullYear();
  if (year < 1000 || year > 9999) {
    const iso = date.toISOString(); // padded and extended years
    return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
  }
  const ms = date.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : `.${String(ms).padStart(3, '0')}`;
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}${fraction}Z`;
};

function text(value: unknown): unknown {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value;
}

const FIELD_NAMES: Record<string, string> = { email: 'e-mail' };

/** The first failed rule of a row, in words; `raw` is the row as read. */
function schemaProblem(error: SchemaError, raw: Record<string, unknown>): string {
  const field =
    error.keyword === 'required' ? String(error.params.missingProperty) : (error.instancePath.split('/')[1] ?? 'row');
  const name = FIELD_NAMES[field] ?? field;
  const value = raw[field];
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  if (error.keyword === 'required') return `${name} is missing`;
  if (error.keyword === 'maxLength') return `${name} is longer than ${String(error.params.limit)} characters`;
  if (field === 'email' && error.keyword === 'format') return `"${shown}" is not an e-mail address`;
  if (field === 'unsubscribed') return `unsubscribed must be true or false (got "${shown}")`;
  if (field === 'subscribed_at') return `subscribed_at "${shown}" is not a date-time (use e.g. 2024-05-01T10:00:00Z)`;
  if (error.keyword === 'type' && error.params.type === 'string') return `${name} must be text`;
  return `${name} ${error.message ?? `fails ${error.keyword}`}`;
}

export function validateMember(read: MemberFields, now: Date): RowVerdict {
  // A full name fills only the name fields that have no column of their own.
  const fields: MemberFields = 'name' in read ? { ...splitName(read.name), ...read } : read;
  const candidate: Record<string, unknown> = {};
  const email = text(fields.email);
  if (email !== undefined && email !== null && email !== '') candidate.email = email;
  for (const key of ['first_name', 'last_name'] as const) {
    const value = text(fields[key]);
    if (value !== undefined && value !== null && value !== '') candidate[key] = value;
  }
  const consent = consentOf(fields);
  if (consent.invalid) {
    const shown = fields[consent.invalid];
    return {
      ok: false,
      error: `${consent.invalid} must be yes or no (got ${typeof shown === 'string' ? `"${shown}"` : JSON.stringify(shown)})`,
    };
  }
  if (consent.unsubscribed !== undefined) candidate.unsubscribed = consent.unsubscribed;
  const subscribedAt = text(fields.subscribed_at);
  let date: Date | undefined;
  if (typeof subscribedAt === 'string' && subscribedAt !== '') {
    date = parseDateTime(subscribedAt);
    candidate.subscribed_at = date ? formatSubscribedAt(date) : subscribedAt;
  } else if (subscribedAt !== undefined && subscribedAt !== null && subscribedAt !== '') {
    candidate.subscribed_at = subscribedAt;
  }

  if (!validateSignupUser(candidate)) {
    const [first] = validateSignupUser.errors ?? [];
    return {
      ok: false,
      error: first
        ? schemaProblem(first, { ...candidate, unsubscribed: fields.unsubscribed, subscribed_at: subscribedAt })
        : 'the row is not a sign-up',
    };
  }
  // The document, in words: "subscribed_at (when the user signed up; must be earlier than now)".
  if (date && date.getTime() >= now.getTime())
    return { ok: false, error: `subscribed_at ${String(subscribedAt)} is not in the past` };
  return { ok: true, user: candidate };
}

export interface SourceRowLike {
  line: number;
  fields: Record<string, unknown>;
  error?: string;
}

export interface AcceptedRow {
  /** Position of the row among all source rows; batches are cut by position. */
  position: number;
  line: number;
  fields: Record<string, unknown>;
  user: SignupUser;
}

export interface RejectedRow {
  line: number;
  fields: Record<string, unknown>;
  error: string;
}

/**
 * One row's verdict without looking at other rows: a record that could not be read, or the
 * member's fields against the sign-up rules. Duplicates are found across rows (seen-emails.ts).
 */
export function checkRow(
  row: SourceRowLike,
  toMember: (fields: Record<string, unknown>) => MemberFields,
  now: Date,
): RowVerdict {
  return row.error ? { ok: false, error: row.error } : validateMember(toMember(row.fields), now);
}
