import { describe, expect, it } from 'vitest';
import {
  applyUpdates,
  brandMemberOf,
  firstNameOf,
  planUpdates,
  type BrandMember,
  type MemberUpdate,
} from './update.js';
import type { AcceptedRow } from './validate.js';

const row = (email: string, names: { first_name?: string; last_name?: string } = {}, position = 0): AcceptedRow => ({
  position,
  line: position + 2,
  fields: {},
  user: { email, ...names },
});

describe('firstNameOf', () => {
  it('takes the first name back out of full_name, the non-empty names joined by a space', () => {
    expect(firstNameOf('Ann Lee', 'Lee')).toBe('Ann');
    expect(firstNameOf('Mary Ann Lee', 'Lee')).toBe('Mary Ann');
    expect(firstNameOf('Lee Lee', 'Lee')).toBe('Lee');
    expect(firstNameOf('Lee', 'Lee')).toBeNull();
    expect(firstNameOf('Ann', null)).toBe('Ann');
    expect(firstNameOf(null, null)).toBeNull();
  });

  it('keys list items by lower-case e-mail', () => {
    expect(
      brandMemberOf({ identifier: 'id-1', email: 'Ann@Example.com', full_name: 'Ann Lee', last_name: 'Lee' }),
    ).toEqual(['ann@example.com', { id: 'id-1', first_name: 'Ann', last_name: 'Lee' }]);
  });
});

describe('planUpdates', () => {
  const members = new Map<string, BrandMember>([
    ['ann@example.com', { id: 'a', first_name: 'Ann', last_name: 'Lee' }],
    ['bob@example.com', { id: 'b', first_name: null, last_name: 'Stone' }],
  ]);

  it('counts new rows, sends only the names that differ, and leaves names the row has not', () => {
    const plan = planUpdates(
      [
        row('ANN@example.com', { first_name: 'Anne', last_name: 'Lee' }),
        row('bob@example.com', { last_name: 'Stone' }),
        row('bob@example.com', { first_name: 'Bob' }),
        row('new@example.com', { first_name: 'New' }),
      ],
      members,
    );
    expect(plan).toEqual({
      created: 1,
      unchanged: 1,
      updates: [
        { identifier: 'a', first_name: 'Anne' },
        { identifier: 'b', first_name: 'Bob' },
      ],
    });
  });
});

describe('applyUpdates', () => {
  const updates: MemberUpdate[] = Array.from({ length: 5 }, (_, i) => ({ identifier: `m${i}`, first_name: 'X' }));

  it('sends batches of the size given and reports each', async () => {
    const sent: number[] = [];
    const reported: number[] = [];
    await applyUpdates({
      updates,
      batchSize: 2,
      concurrency: 1,
      signal: new AbortController().signal,
      send: async (members) => {
        sent.push(members.length);
        return { updated: members.length, notFound: [] };
      },
      onBatch: (n) => {
        reported.push(n);
      },
    });
    expect(sent).toEqual([2, 2, 1]);
    expect(reported).toEqual([2, 2, 1]);
  });

  it('stops taking batches after a failure and throws it', async () => {
    let calls = 0;
    const failing = applyUpdates({
      updates,
      batchSize: 1,
      concurrency: 1,
      signal: new AbortController().signal,
      send: async () => {
        calls += 1;
        throw new Error('boom');
      },
      onBatch: () => undefined,
    });
    await expect(failing).rejects.toThrow('boom');
    expect(calls).toBe(1);
  });
});
