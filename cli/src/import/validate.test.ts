import { describe, expect, it } from 'vitest';
import { parseBooleanish, parseDateTime, validateMember, validateRows } from './validate.js';

const now = new Date('2026-06-01T12:00:00Z');

describe('validateMember', () => {
  it('accepts a full row and normalises it to the signup shape', () => {
    expect(
      validateMember(
        {
          email: ' ann@example.com ',
          first_name: 'Ann',
          last_name: '',
          unsubscribed: 'yes',
          subscribed_at: '2024-05-01 10:00:00',
        },
        now,
      ),
    ).toEqual({
      ok: true,
      user: { email: 'ann@example.com', first_name: 'Ann', unsubscribed: true, subscribed_at: '2024-05-01T10:00:00Z' },
    });
  });

  it.each([
    [{}, 'e-mail is missing'],
    [{ email: 'not-an-address' }, '"not-an-address" is not an e-mail address'],
    [{ email: 'a@b' }, '"a@b" is not an e-mail address'],
    [{ email: 'a b@example.com' }, '"a b@example.com" is not an e-mail address'],
    [{ email: 'a@example.com', first_name: 'x'.repeat(192) }, 'first_name is longer than 191 characters'],
    [{ email: 'a@example.com', unsubscribed: 'maybe' }, 'unsubscribed must be true or false (got "maybe")'],
    [
      { email: 'a@example.com', subscribed_at: 'yesterday' },
      'subscribed_at "yesterday" is not a date-time (use e.g. 2024-05-01T10:00:00Z)',
    ],
    [
      { email: 'a@example.com', subscribed_at: '2026-06-01T12:00:00Z' },
      'subscribed_at 2026-06-01T12:00:00Z is not in the past',
    ],
    [
      { email: 'a@example.com', subscribed_at: '2024-02-30' },
      'subscribed_at "2024-02-30" is not a date-time (use e.g. 2024-05-01T10:00:00Z)',
    ],
    [{ email: `${'a'.repeat(180)}@example.com` }, 'e-mail is longer than 191 characters'],
    [{ email: { address: 'a@example.com' } }, 'e-mail must be text'],
  ])('rejects %j: %s', (fields, error) => {
    expect(validateMember(fields, now)).toEqual({ ok: false, error });
  });

  it('counts name length in characters, not bytes', () => {
    expect(validateMember({ email: 'a@example.com', first_name: 'é'.repeat(191) }, now).ok).toBe(true);
  });
});

describe('field parsers', () => {
  it('reads boolean-ish values', () => {
    expect(['TRUE', '1', 'y', 'on', true, 1].map(parseBooleanish)).toEqual([true, true, true, true, true, true]);
    expect(['false', '0', 'No', 'off', false, 0].map(parseBooleanish)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(['', undefined, null].map(parseBooleanish)).toEqual([undefined, undefined, undefined]);
    expect(parseBooleanish(2)).toBe('invalid');
  });

  it('reads date-times with offsets as the same instant', () => {
    expect(parseDateTime('2024-05-01T12:00:00+02:00')?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(parseDateTime('2024-05-01T12:00:00+0200')?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(parseDateTime('2024-05-01')?.toISOString()).toBe('2024-05-01T00:00:00.000Z');
    expect(parseDateTime('2024-05-01T25:00:00Z')).toBeUndefined();
    expect(parseDateTime('05/01/2024')).toBeUndefined();
  });

  it('takes e-mail addresses by the schema of POST /members/signups (format: email, as the server does)', () => {
    const verdict = (email: string) => validateMember({ email }, now).ok;
    expect(['first.last+tag@mail.example.co.uk', 'Ann@Example.COM', "o'brien@example.ie"].map(verdict)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['a..b@example.com', 'a@-example.com', 'a@exa_mple.org', '.a@example.com', 'a@b'].map(verdict)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    // The document's rule, not a stricter one of the CLI's own: the server takes a numeric top-level domain too.
    expect(verdict('a@example.123')).toBe(true);
  });
});

describe('validateRows', () => {
  it('rejects the later copies of an e-mail, case-insensitively, naming the first line', () => {
    const result = validateRows(
      [
        { line: 2, fields: { email: 'Ann@example.com' } },
        { line: 3, fields: { email: 'bad' } },
        { line: 4, fields: { email: 'ann@EXAMPLE.com' } },
        { line: 5, fields: {}, error: 'not valid JSON' },
      ],
      (fields) => fields,
      now,
    );
    expect(result.accepted.map((row) => [row.position, row.line])).toEqual([[0, 2]]);
    expect(result.rejected.map((row) => [row.line, row.error])).toEqual([
      [3, '"bad" is not an e-mail address'],
      [4, 'duplicate of ann@EXAMPLE.com on line 2'],
      [5, 'not valid JSON'],
    ]);
  });
});
