import { describe, expect, it } from 'vitest';
import { parseMapOptions } from '../columns.js';
import { POINTS_FIELDS, pointsColumns, readPointsRow, type PointsColumns } from './rows.js';

describe('pointsColumns', () => {
  it('finds the member, storecard and points columns by name, in any case', () => {
    expect(pointsColumns(['Email', 'Storecard_ID', 'Points', 'note'], undefined)).toEqual({
      member: ['Email'],
      storecard: 'Storecard_ID',
      points: 'Points',
    });
  });

  it('names what is missing', () => {
    expect(pointsColumns(['name', 'points'], 'card')).toEqual({ problem: expect.stringMatching(/^no member column/) });
    expect(pointsColumns(['email', 'amount'], 'card')).toEqual({ problem: expect.stringMatching(/^no points column/) });
    expect(pointsColumns(['email', 'points'], undefined)).toEqual({
      problem: expect.stringMatching(/no storecard column .* and no --storecard/),
    });
    expect(pointsColumns(['email', 'points'], 'card-points')).toMatchObject({ storecard: undefined });
  });

  it('takes the columns --map names, before any recognised name, and names a mapped column the input lacks', () => {
    const columns = ['E-Mail', 'Kundennummer', 'Karte', 'Punktestand'];
    expect(pointsColumns(columns, undefined)).toEqual({
      problem: expect.stringMatching(/or pass --map points=<column>/),
    });
    expect(
      pointsColumns(columns, undefined, { member: 'Kundennummer', storecard: 'Karte', points: 'Punktestand' }),
    ).toEqual({ member: ['Kundennummer'], storecard: 'Karte', points: 'Punktestand' });
    expect(pointsColumns(['email', 'points', 'Saldo'], 'card', { points: 'Saldo' })).toEqual({
      member: ['email'],
      storecard: undefined,
      points: 'Saldo',
    });
    expect(pointsColumns(columns, 'card', { member: 'E-Mail', points: 'Punkte' })).toEqual({
      problem:
        '--map points=Punkte: the input has no column "Punkte" (its columns: E-Mail, Kundennummer, Karte, Punktestand)',
    });
  });

  it('parses --map with the points fields only', () => {
    expect(parseMapOptions(['member=Kundennummer', 'points=Punkte'], POINTS_FIELDS)).toEqual({
      member: 'Kundennummer',
      points: 'Punkte',
    });
    expect(() => parseMapOptions(['email=Mail'], POINTS_FIELDS)).toThrow(/Invalid --map "email=Mail"/);
    const refusal = (() => {
      try {
        parseMapOptions(['points='], POINTS_FIELDS);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toMatchObject({ hint: expect.stringContaining('field is one of member, storecard, points') });
  });
});

describe('readPointsRow', () => {
  const columns: PointsColumns = { member: ['email', 'member_id'], storecard: 'storecard', points: 'points' };
  const read = (fields: Record<string, unknown>, mode: 'add' | 'set' = 'add', defaultStorecard?: string) =>
    readPointsRow({ line: 7, fields }, 5, columns, { mode, defaultStorecard });

  it('reads an e-mail (lower-cased) or a UUID, the storecard (or the default) and whole points', () => {
    expect(read({ email: ' Ada@Example.org ', storecard: 'card-points', points: '120' })).toEqual({
      ok: true,
      row: expect.objectContaining({
        position: 5,
        line: 7,
        member: { email: 'ada@example.org' },
        storecardId: 'card-points',
        points: 120,
      }),
    });
    const uuid = '0D9C8B7A-6E5F-4A3B-9C2D-1E0F9A8B7C6D';
    expect(read({ email: '', member_id: uuid, points: '-5' }, 'add', 'card')).toMatchObject({
      ok: true,
      row: { member: { uuid: uuid.toLowerCase() }, storecardId: 'card', points: -5 },
    });
  });

  it.each([
    [{ email: '', points: '1', storecard: 'c' }, /^no member: email \/ member_id is empty/],
    [{ email: 'ada@', points: '1', storecard: 'c' }, /"ada@" is not an e-mail address/],
    [{ email: 'ada', points: '1', storecard: 'c' }, /neither an e-mail address nor a member UUID/],
    [{ email: 'a@b.org', points: '1.5', storecard: 'c' }, /points must be a whole number \(got "1.5"\)/],
    [{ email: 'a@b.org', points: '', storecard: 'c' }, /points must be a whole number/],
    [{ email: 'a@b.org', points: '99999999999999999999', storecard: 'c' }, /out of range/],
    [{ email: 'a@b.org', points: '1', storecard: '' }, /no storecard/],
  ])('rejects %o', (fields, error) => {
    expect(read(fields)).toEqual({ ok: false, error: expect.stringMatching(error) });
  });

  it('a --set target must be 0 or more; negative points in --add are a spend', () => {
    expect(read({ email: 'a@b.org', points: '-1', storecard: 'c' }, 'set')).toEqual({
      ok: false,
      error: 'a balance to set cannot be negative (got -1)',
    });
    expect(read({ email: 'a@b.org', points: '0', storecard: 'c' }, 'set')).toMatchObject({ ok: true });
    expect(read({ email: 'a@b.org', points: '-1', storecard: 'c' }, 'add')).toMatchObject({ ok: true });
  });

  it('a record that could not be read is rejected with its reason', () => {
    expect(readPointsRow({ line: 3, fields: {}, error: 'bad JSON' }, 0, columns, { mode: 'add' })).toEqual({
      ok: false,
      error: 'bad JSON',
    });
  });
});
