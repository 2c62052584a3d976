import { describe, expect, it } from 'vitest';
import { isEventOf, TRIGGER_TYPES } from './recipes.js';

describe('trigger recipes', () => {
  it('cover the four event types of the specification, in the order of the document', () => {
    expect(TRIGGER_TYPES).toEqual(['member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed']);
  });

  it('isEventOf: the member and every id both sides have must be equal', () => {
    const created = { member_id: 'm-1', coupon_id: 'c-1', pass_code: 'P-1', email: 'x@example.test' };
    expect(isEventOf({ member_id: 'm-1', coupon_id: 'c-1', pass_id: 'p' }, created)).toBe(true);
    expect(isEventOf({ member_id: 'm-2', coupon_id: 'c-1' }, created)).toBe(false);
    expect(isEventOf({ member_id: 'm-1', coupon_id: 'c-2' }, created)).toBe(false);
    expect(isEventOf({ member_id: 'm-1', reference: 'r-1' }, { member_id: 'm-1', reference: 'r-2' })).toBe(false);
  });
});
