// Validates import rows before anything is sent, with the rules of POST /members/signups:
// an e-mail address, names of at most 191 characters, a boolean-ish unsubscribed, and a
// subscribed_at date-time earlier than now. An e-mail may appear only once per file.
import type { MemberFields } from './columns.js';

export interface SignupUser {
  email: string;
  first_name?: string;
  last_name?: string;
  unsubscribed?: boolean;
  subscribed_at?: string;
}

export type RowVerdict = { ok: true; user: SignupUser } | { ok: false; error: string };

export const NAME_MAX_LENGTH = 191;
export const EMAIL_MAX_LENGTH = 191;

// Pragmatic address check: one @, a local part without spaces or specials, a dotted domain
// whose labels are letters, digits and inner hyphens, and a top-level domain of letters.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;

export function emailProblem(email: string): string | undefined {
  if (email === '') return 'e-mail is missing';
  if (email.length > EMAIL_MAX_LENGTH) return `e-mail is longer than ${EMAIL_MAX_LENGTH} characters`;
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return `"${email}" is not an e-mail address`;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const labels = domain.split('.');
  const tld = labels[labels.length - 1] ?? '';
  if (
    local.length > 64 ||
    !LOCAL_PART.test(local) ||
    local.startsWith('.') ||
    local.endsWith('.') ||
    local.includes('..') ||
    labels.length < 2 ||
    !labels.every((label) => label.length <= 63 && DOMAIN_LABEL.test(label)) ||
    !/^[A-Za-z]{2,}$/.test(tld)
  ) {
    return `"${email}" is not an e-mail address`;
  }
  return undefined;
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 't', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'f', 'off']);

export function parseBooleanish(value: unknown): boolean | undefined | 'invalid' {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value !== 'string') return 'invalid';
  const word = value.trim().toLowerCase();
  if (word === '') return undefined;
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return 'invalid';
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
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${offset}`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date accepts 2024-02-30 by rolling over; a real calendar date must round-trip.
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  return date;
}

/** The wire form of subscribed_at: RFC 3339 in UTC. */
export const formatSubscribedAt = (date: Date): string => date.toISOString().replace(/\.000Z$/, 'Z');

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

export function validateMember(fields: MemberFields, now: Date): RowVerdict {
  const email = text(fields.email);
  if (email === undefined && fields.email !== undefined && fields.email !== null) return { ok: false, error: 'e-mail must be text' };
  const emailError = emailProblem(email ?? '');
  if (emailError) return { ok: false, error: emailError };
  const user: SignupUser = { email: email! };

  for (const key of ['first_name', 'last_name'] as const) {
    const value = text(fields[key]);
    if (value === undefined && fields[key] !== undefined && fields[key] !== null) return { ok: false, error: `${key} must be text` };
    if (value === undefined || value === '') continue;
    if ([...value].length > NAME_MAX_LENGTH) return { ok: false, error: `${key} is longer than ${NAME_MAX_LENGTH} characters` };
    user[key] = value;
  }

  const unsubscribed = parseBooleanish(fields.unsubscribed);
  if (unsubscribed === 'invalid') {
    return { ok: false, error: `unsubscribed must be true or false (got "${String(fields.unsubscribed)}")` };
  }
  if (unsubscribed !== undefined) user.unsubscribed = unsubscribed;

  const subscribedAt = text(fields.subscribed_at);
  if (subscribedAt) {
    const date = parseDateTime(subscribedAt);
    if (!date) return { ok: false, error: `subscribed_at "${subscribedAt}" is not a date-time (use e.g. 2024-05-01T10:00:00Z)` };
    if (date.getTime() >= now.getTime()) return { ok: false, error: `subscribed_at ${subscribedAt} is not in the past` };
    user.subscribed_at = formatSubscribedAt(date);
  }
  return { ok: true, user };
}

/** Remembers e-mails (case-insensitively, as the API compares them) and where they were first seen. */
export class DuplicateEmails {
  readonly #firstLine = new Map<string, number>();

  /** Returns the line of the earlier occurrence, or undefined the first time an e-mail is seen. */
  seen(email: string, line: number): number | undefined {
    const key = email.toLowerCase();
    const earlier = this.#firstLine.get(key);
    if (earlier !== undefined) return earlier;
    this.#firstLine.set(key, line);
    return undefined;
  }
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

export interface ValidationResult {
  accepted: AcceptedRow[];
  rejected: RejectedRow[];
}

export function validateRows(
  rows: readonly SourceRowLike[],
  toMember: (fields: Record<string, unknown>) => MemberFields,
  now: Date,
): ValidationResult {
  const accepted: AcceptedRow[] = [];
  const rejected: RejectedRow[] = [];
  const duplicates = new DuplicateEmails();
  rows.forEach((row, position) => {
    if (row.error) {
      rejected.push({ line: row.line, fields: row.fields, error: row.error });
      return;
    }
    const verdict = validateMember(toMember(row.fields), now);
    if (!verdict.ok) {
      rejected.push({ line: row.line, fields: row.fields, error: verdict.error });
      return;
    }
    const earlier = duplicates.seen(verdict.user.email, row.line);
    if (earlier !== undefined) {
      rejected.push({ line: row.line, fields: row.fields, error: `duplicate of ${verdict.user.email} on line ${earlier}` });
      return;
    }
    accepted.push({ position, line: row.line, fields: row.fields, user: verdict.user });
  });
  return { accepted, rejected };
}
