import { describe, expect, it } from 'vitest';
import { actionOf, deltaOf, resolveRows, scansFor, transactionReference, type LiveState } from './plan.js';
import type { PointsRow } from './rows.js';

const file = { sha256: 'a'.repeat(64), brandId: 'brand-acme', mode: 'set' as const };
const row = (over: Partial<PointsRow> = {}): PointsRow => ({
  position: 0,
  line: 2,
  fields: {},
  member: { email: 'ada@example.org' },
  storecardId: 'card-points',
  points: 100,
  ...over,
});

describe('transactionReference', () => {
  it('is the same for the same file, row and starting balance: a rerun is recognised by the server', () => {
    expect(transactionReference(file, row(), 40, 0)).toBe(transactionReference(file, row(), 40, 0));
    expect(transactionReference(file, row(), 40, 0)).toMatch(/^import-[0-9a-f]{40}$/);
  });

  it('differs when anything that makes it a different transaction differs', () => {
    const base = transactionReference(file, row(), 40, 0);
    const others = [
      transactionReference({ ...file, sha256: 'b'.repeat(64) }, row(), 40, 0),
      transactionReference({ ...file, mode: 'add' }, row(), 40, 0),
      transactionReference({ ...file, brandId: 'brand-other' }, row(), 40, 0),
      transactionReference(file, row({ line: 3 }), 40, 0),
      transactionReference(file, row({ member: { email: 'bob@example.org' } }), 40, 0),
      transactionReference(file, row({ storecardId: 'card-other' }), 40, 0),
      transactionReference(file, row({ points: 101 }), 40, 0),
      transactionReference(file, row(), 41, 0),
      transactionReference(file, row(), 40, 1),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });

  it('fits the document’s 191 characters', () => {
    expect(transactionReference(file, row(), null, 12).length).toBeLessThanOrEqual(191);
  });
});

describe('deltaOf and actionOf', () => {
  it('--add sends the row’s points whatever the balance; --set the difference to the target', () => {
    expect(deltaOf('add', 30, 500)).toBe(30);
    expect(deltaOf('add', -30, undefined)).toBe(-30);
    expect(deltaOf('set', 30, 50)).toBe(-20);
    expect(deltaOf('set', 30, undefined)).toBe(30);
    expect(deltaOf('set', 50, 50)).toBe(0);
  });

  it('nothing to move is unchanged (no pass issued); a member without a pass is created', () => {
    expect(actionOf(0, false)).toBe('unchanged');
    expect(actionOf(0, true)).toBe('unchanged');
    expect(actionOf(5, false)).toBe('created');
    expect(actionOf(-5, true)).toBe('adjusted');
  });
});

describe('scansFor', () => {
  it('earns a positive delta and spends a negative one', () => {
    expect(scansFor(70, (n) => `r${n}`)).toEqual([{ type: 'earn', points: 70, transaction_reference: 'r0' }]);
    expect(scansFor(-20, (n) => `r${n}`)).toEqual([{ type: 'spend', points: 20, transaction_reference: 'r0' }]);
    expect(scansFor(0, (n) => `r${n}`)).toEqual([]);
  });

  it('splits an amount above 1,000,000 (the most one scan carries) into pieces with their own references', () => {
    expect(scansFor(2_500_000, (n) => `r${n}`)).toEqual([
      { type: 'earn', points: 1_000_000, transaction_reference: 'r0' },
      { type: 'earn', points: 1_000_000, transaction_reference: 'r1' },
      { type: 'earn', points: 500_000, transaction_reference: 'r2' },
    ]);
  });
});

describe('resolveRows', () => {
  const live: LiveState = {
    uuidByEmail: new Map([['ada@example.org', 'u-ada']]),
    uuids: new Set(['u-ada', '0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d']),
    passes: new Map([['card-points', new Map([['u-ada', 'STC-ADA']])]]),
  };

  it('finds members by e-mail or UUID and their pass of the row’s storecard', () => {
    const { resolved, rejected } = resolveRows(
      [row(), row({ line: 3, member: { uuid: '0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d' } })],
      live,
      'add',
    );
    expect(rejected).toEqual([]);
    expect(resolved.map((r) => [r.uuid, r.passCode])).toEqual([
      ['u-ada', 'STC-ADA'],
      ['0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d', undefined],
    ]);
  });

  it('rejects a member the brand does not have (another organization’s member is not seen)', () => {
    const { rejected } = resolveRows([row({ member: { email: 'globex@example.org' } })], live, 'add');
    expect(rejected).toEqual([{ line: 2, fields: {}, error: 'no member globex@example.org in this brand' }]);
  });

  it('--set refuses a second target for the same pass, also when named once by e-mail and once by UUID', () => {
    const rows = [row(), row({ line: 3, member: { uuid: 'u-ada' } })];
    expect(resolveRows(rows, { ...live, uuids: new Set(['u-ada']) }, 'set').rejected).toEqual([
      { line: 3, fields: {}, error: "line 2 already sets the balance of this member's card-points pass" },
    ]);
    expect(resolveRows(rows, { ...live, uuids: new Set(['u-ada']) }, 'add').rejected).toEqual([]);
  });
});
