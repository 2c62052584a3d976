import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import type { DomainError } from '../platform/errors.js';
import { createMember } from '../members/members.js';
import { issuePassToMember } from './passes-issue.js';
import { scanStorecard, type StorecardScanInput } from './storecard-scan.js';

let db: TestDatabase;
const acme = { organizationIds: ['org-acme'] };
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function storecardPass(email: string): Promise<{ passCode: string; memberId: string; passId: string }> {
  return db.sql.begin(async (tx) => {
    const { memberId } = await createMember(tx, acme, { brand_id: 'brand-acme', email });
    const pass = await issuePassToMember(
      tx,
      acme,
      memberId,
      { brand_id: 'brand-acme', storecard_id: 'card-points' },
      'http://x.test',
    );
    return { passCode: pass.passCode, memberId, passId: pass.passId };
  });
}

const scan = (input: StorecardScanInput) => db.sql.begin((tx) => scanStorecard(tx, acme, input));
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: DomainError) => e,
  );
const totals = async (passCode: string) =>
  (
    await db.sql<
      { points: number; balance: number }[]
    >`SELECT points, balance FROM passes WHERE pass_code = ${passCode}`
  )[0]!;

describe('scanStorecard under concurrency', () => {
  it('keeps points and balance exact when 40 earns and spends on one pass run at once', async () => {
    const { passCode } = await storecardPass('race@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 100, transaction_reference: 'seed' });
    const jobs = Array.from({ length: 40 }, (_, i) =>
      scan({ pass_code: passCode, type: i % 2 ? 'spend' : 'earn', points: 3, transaction_reference: `r-${i}` }),
    );
    const results = await Promise.all(jobs);
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(await totals(passCode)).toEqual({ points: 160, balance: 100 });
    // Every transaction recorded the totals it left, in one serial order.
    const balances = results.map((r) => r.body.transaction.balance).sort((a, b) => a - b);
    expect(new Set(balances).size).toBeGreaterThan(1);
  });

  it('never lets concurrent spends take the balance below zero', async () => {
    const { passCode } = await storecardPass('overspend@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 10, transaction_reference: 'seed' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        scan({ pass_code: passCode, type: 'spend', points: 4, transaction_reference: `s-${i}` }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(rejected.every((o) => (o.reason as DomainError).code === 'insufficient_balance')).toBe(true);
    expect(await totals(passCode)).toEqual({ points: 10, balance: 2 });
  });

  it('applies a reference sent ten times at once exactly once', async () => {
    const { passCode, passId } = await storecardPass('dupe@example.test');
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        scan({ pass_code: passCode, type: 'earn', points: 7, transaction_reference: 'same' }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(
      results.filter((r) => r.status === 200).every((r) => !r.body.created && r.body.transaction.balance === 7),
    ).toBe(true);
    expect(await totals(passCode)).toEqual({ points: 7, balance: 7 });
    const events = await db.sql`SELECT 1 FROM events WHERE type = 'points.changed' AND data->>'pass_id' = ${passId}`;
    expect(events).toHaveLength(1);
  });
});

describe('scanStorecard rules', () => {
  it('replays the first result for a repeated reference even when the repeat would now fail', async () => {
    const { passCode } = await storecardPass('replay@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 5, transaction_reference: 'e1' });
    const first = await scan({ pass_code: passCode, type: 'spend', points: 5, transaction_reference: 'sp1' });
    const again = await scan({ pass_code: passCode, type: 'spend', points: 5, transaction_reference: 'sp1' });
    expect(again).toEqual({ status: 200, body: { ...first.body, created: false } });
    await scan({ pass_code: passCode, type: 'earn', points: 3, transaction_reference: 'e2' });
    const later = await scan({ pass_code: passCode, type: 'spend', points: 5, transaction_reference: 'sp1' });
    expect(later.body.transaction).toEqual(first.body.transaction);
    expect(later.body.pass).toEqual({ pass_code: passCode, points: 8, balance: 3 });
    expect(await totals(passCode)).toEqual({ points: 8, balance: 3 });
  });

  it('reverses an earn once, taking points and balance back, and refuses a second reversal', async () => {
    const { passCode, memberId, passId } = await storecardPass('reverse@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 8, transaction_reference: 'e1' });
    const reversed = await scan({
      pass_code: passCode,
      type: 'reverse',
      transaction_reference: 'rev1',
      reverses: 'e1',
    });
    expect(reversed.body.transaction).toMatchObject({ type: 'reverse', points: 8, balance: 0 });
    expect(reversed.body.pass).toEqual({ pass_code: passCode, points: 0, balance: 0 });
    expect(
      (await failure(scan({ pass_code: passCode, type: 'reverse', transaction_reference: 'rev2', reverses: 'e1' })))
        .code,
    ).toBe('already_reversed');
    const [event] = await db.sql<{ data: Record<string, unknown> }[]>`
      SELECT data FROM events WHERE type = 'points.changed' AND data->>'reference' = 'rev1' AND data->>'pass_id' = ${passId}`;
    expect(event!.data).toEqual({
      member_id: memberId,
      brand_id: 'brand-acme',
      storecard_id: 'card-points',
      pass_id: passId,
      type: 'reverse',
      points: 8,
      balance: 0,
      reference: 'rev1',
    });
  });

  it('reverses a spend by giving the balance back, not the points', async () => {
    const { passCode } = await storecardPass('reverse-spend@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 10, transaction_reference: 'e1' });
    await scan({ pass_code: passCode, type: 'spend', points: 4, transaction_reference: 's1' });
    await scan({ pass_code: passCode, type: 'reverse', transaction_reference: 'r1', reverses: 's1' });
    expect(await totals(passCode)).toEqual({ points: 10, balance: 10 });
  });

  it('refuses to reverse an earn whose points were spent already', async () => {
    const { passCode } = await storecardPass('reverse-spent@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 10, transaction_reference: 'e1' });
    await scan({ pass_code: passCode, type: 'spend', points: 8, transaction_reference: 's1' });
    expect(
      (await failure(scan({ pass_code: passCode, type: 'reverse', transaction_reference: 'r1', reverses: 'e1' }))).code,
    ).toBe('insufficient_balance');
    expect(await totals(passCode)).toEqual({ points: 10, balance: 2 });
  });

  it('names the field for an unknown reversed reference, a reversal of a reversal and missing points', async () => {
    const { passCode } = await storecardPass('reverse-bad@example.test');
    await scan({ pass_code: passCode, type: 'earn', points: 1, transaction_reference: 'e1' });
    await scan({ pass_code: passCode, type: 'reverse', transaction_reference: 'r1', reverses: 'e1' });
    expect(
      (await failure(scan({ pass_code: passCode, type: 'reverse', transaction_reference: 'r2', reverses: 'nope' })))
        .fields,
    ).toHaveProperty('reverses');
    expect(
      (await failure(scan({ pass_code: passCode, type: 'reverse', transaction_reference: 'r3', reverses: 'r1' })))
        .fields,
    ).toHaveProperty('reverses');
    expect(
      (await failure(scan({ pass_code: passCode, type: 'earn', transaction_reference: 'e2' }))).fields,
    ).toHaveProperty('points');
  });

  it('does not find a pass of another organization', async () => {
    const { passCode } = await storecardPass('foreign@example.test');
    const error = await failure(
      db.sql.begin((tx) =>
        scanStorecard(
          tx,
          { organizationIds: ['org-globex'] },
          { pass_code: passCode, type: 'earn', points: 1, transaction_reference: 'x' },
        ),
      ),
    );
    expect(error.kind).toBe('not_found');
  });
});
