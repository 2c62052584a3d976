import { describe, expect, it } from 'vitest';
import { retainedBytes } from '#test-helpers/cli-unit/retained.js';
import { DuplicateCandidates, DuplicateEmails, emailHash } from './seen-emails.js';
import {
  checkRow,
  formatSubscribedAt,
  parseBooleanish,
  parseDateTime,
  type SourceRowLike,
  validateMember,
} from './validate.js';

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
    [{ email: 'a@example.com', unsubscribed: 'maybe' }, 'unsubscribed must be yes or no (got "maybe")'],
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

  it('reads date-times by numbers exactly as the string parse did (every form, edge and invalid values)', () => {
    // The earlier implementation (Date's own parse of an ISO string), as the reference.
    const DATE_TIME =
      /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
    const reference = (input: string): Date | undefined => {
      const match = DATE_TIME.exec(input.trim());
      if (!match) return undefined;
      const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
      const offset =
        zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
      const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${offset}`);
      if (Number.isNaN(date.getTime())) return undefined;
      const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
      if (check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day)) return undefined;
      if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
      return date;
    };
    let seed = 17;
    const pick = <T>(list: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return list[seed % list.length] as T;
    };
    const years = ['1900', '1970', '1999', '2000', '2023', '2024', '2100', '2400', '9999'];
    const months = ['00', '01', '02', '04', '06', '09', '11', '12', '13'];
    const days = ['00', '01', '28', '29', '30', '31', '32'];
    const times = [
      '',
      ' 00:00',
      'T23:59',
      ' 10:00:00',
      'T23:59:59',
      ' 24:00:00',
      'T12:60:00',
      ' 12:00:60',
      'T01:02:03.5',
      ' 01:02:03.123456789',
      't01:02:03.07',
    ];
    const zones = [
      '',
      'Z',
      'z',
      '+00:00',
      '+02:00',
      '-05:30',
      '+0200',
      '-0000',
      '+23:59',
      '+24:00',
      '-12:60',
      '+14:00',
    ];
    let compared = 0;
    for (let i = 0; i < 20_000; i++) {
      const time = pick(times);
      const input = `${pick(years)}-${pick(months)}-${pick(days)}${time}${time ? pick(zones) : ''}`;
      expect(parseDateTime(input)?.getTime(), input).toBe(reference(input)?.getTime());
      compared++;
    }
    expect(compared).toBe(20_000);
    // Years below 100 are those years (Date.UTC would read them as 1900-1999).
    expect(parseDateTime('0050-03-01T00:00:00Z')?.toISOString()).toBe('0050-03-01T00:00:00.000Z');
    expect(formatSubscribedAt(new Date(Date.UTC(2024, 4, 1, 10)))).toBe('2024-05-01T10:00:00Z');
    expect(formatSubscribedAt(new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 120)))).toBe('2024-05-01T10:00:00.120Z');
  });

  it('writes subscribed_at as toISOString() does, without .000, for any instant', () => {
    const iso = (date: Date): string => date.toISOString().replace(/\.000Z$/, 'Z');
    const edges = [
      Date.UTC(2024, 0, 1),
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2024, 1, 29, 12, 30, 5, 7),
      Date.UTC(2024, 4, 1, 10, 0, 0, 40),
      Date.UTC(1000, 0, 1) - 1, // year 999: padded
      Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1, // year 10000: extended
      -1, // 1969
      new Date('0001-01-01T00:00:00Z').getTime() - 1, // year 0 and before: extended
    ];
    for (const time of edges) expect(formatSubscribedAt(new Date(time)), String(time)).toBe(iso(new Date(time)));
    const FIRST = Date.parse('0000-01-01T00:00:00Z'); // Date.UTC(0, …) is 1900
    let state = 7;
    for (let i = 0; i < 20_000; i++) {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      const time = FIRST + (state / 2 ** 31) * (Date.UTC(10_500, 0, 1) - FIRST);
      const date = new Date(Math.round(time / (i % 2 ? 1 : 1000)) * (i % 2 ? 1 : 1000));
      expect(formatSubscribedAt(date), String(date.getTime())).toBe(iso(date));
    }
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

describe('checkRow and duplicates', () => {
  /** The two passes of an import over these rows: candidates first, then the exact answer. */
  function verdicts(rows: SourceRowLike[]): Array<[number, string]> {
    const candidates = new DuplicateCandidates();
    for (const row of rows) {
      const verdict = checkRow(row, (fields) => fields, now);
      if (verdict.ok) candidates.add(verdict.user.email);
    }
    const duplicates = new DuplicateEmails(candidates.hashes);
    return rows.map((row) => {
      const verdict = checkRow(row, (fields) => fields, now);
      if (!verdict.ok) return [row.line, verdict.error];
      const earlier = duplicates.seen(verdict.user.email, row.line);
      return [row.line, earlier === undefined ? 'ok' : `duplicate of ${verdict.user.email} on line ${earlier}`];
    });
  }

  it('rejects the later copies of an e-mail, case-insensitively, naming the first line', () => {
    expect(
      verdicts([
        { line: 2, fields: { email: 'Ann@example.com' } },
        { line: 3, fields: { email: 'bad' } },
        { line: 4, fields: { email: 'ann@EXAMPLE.com' } },
        { line: 5, fields: {}, error: 'not valid JSON' },
        { line: 6, fields: { email: 'bo@example.com' } },
      ]),
    ).toEqual([
      [2, 'ok'],
      [3, '"bad" is not an e-mail address'],
      [4, 'duplicate of ann@EXAMPLE.com on line 2'],
      [5, 'not valid JSON'],
      [6, 'ok'],
    ]);
  });

  it('tells apart different e-mails that share a 32-bit hash', () => {
    // Find two addresses with the same hash (birthday bound: ~2^16 tries).
    const byHash = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const email = `m${i}@example.com`;
      const other = byHash.get(emailHash(email));
      if (other) pair = [other, email];
      byHash.set(emailHash(email), email);
    }
    const rows = [pair[0], pair[1], pair[0]].map((email, i) => ({ line: i + 2, fields: { email } }));
    const candidates = new DuplicateCandidates();
    for (const { fields } of rows) candidates.add(fields.email);
    expect(candidates.rows).toBe(2); // both later rows are candidates...
    expect(verdicts(rows)).toEqual([
      [2, 'ok'],
      [3, 'ok'], // ...but only the real copy is a duplicate
      [4, `duplicate of ${pair[0]} on line 2`],
    ]);
  }, 30_000); // CPU-bound (hundreds of thousands of e-mails): seconds on a busy machine

  it('keeps a few bytes per distinct e-mail in the first pass, not the e-mails', async () => {
    const used = retainedBytes;
    const before = await used();
    const candidates = new DuplicateCandidates();
    for (let i = 0; i < 1_000_000; i++) candidates.add(`member${i}@example.com`);
    // A table of 2^21 32-bit slots is 8 MB; a Set of the million e-mails retains over 60 MB.
    expect((await used()) - before).toBeLessThan(10 * 1024 * 1024);
    expect(candidates.rows).toBeLessThan(1_000); // ~116 hash collisions expected, no real duplicates
  }, 30_000); // CPU-bound (hundreds of thousands of e-mails): seconds on a busy machine

  it('with the length known, keeps about 1.3 bytes a row and misses no duplicate', async () => {
    const used = retainedBytes;
    const before = await used();
    const candidates = new DuplicateCandidates();
    for (let i = 0; i < 100_000; i++) candidates.add(`member${i}@example.com`);
    candidates.expect(2_000_000);
    for (let i = 100_000; i < 2_000_000; i++) candidates.add(`member${i}@example.com`);
    const distinct = candidates.rows;
    // Every 1000th address again, some in other case: each must be a candidate.
    for (let i = 0; i < 2_000_000; i += 1000) candidates.add(`Member${i}@Example.com`);
    expect(candidates.rows - distinct).toBe(2000);
    expect(distinct).toBeLessThan(2_000_000 * 0.02); // false "seen" answers: about 1 %
    // 2.5M rows' worth of filter is ~3 MB, and the exact table of the first 100,000 is gone; the
    // exact table of 2M hashes would be 16 MB.
    expect((await used()) - before).toBeLessThan(8 * 1024 * 1024);
    const { hashes } = candidates.result();
    const exact = new DuplicateEmails(hashes);
    expect(exact.seen('member5000@example.com', 2)).toBeUndefined();
    expect(exact.seen('MEMBER5000@example.com', 9)).toBe(2);
  }, 30_000); // CPU-bound (hundreds of thousands of e-mails): seconds on a busy machine
});
