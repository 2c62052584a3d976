import { describe, expect, it } from 'vitest';
import { closestMatch, isEventOf, parseTriggerType, TRIGGER_TYPES } from './recipes.js';

describe('trigger recipes', () => {
  it('cover the four event types of the specification, in the order of the document', () => {
    expect(TRIGGER_TYPES).toEqual(['member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed']);
    expect(parseTriggerType('points.changed')).toBe('points.changed');
  });

  it('closestMatch suggests a near name and nothing for a far one', () => {
    expect(closestMatch('member_created', TRIGGER_TYPES)).toBe('member.created');
    expect(closestMatch('Coupon.Redeem', TRIGGER_TYPES)).toBe('coupon.redeemed');
    expect(closestMatch('points', TRIGGER_TYPES)).toBeUndefined();
    expect(closestMatch('invoice.paid', TRIGGER_TYPES)).toBeUndefined();
  });

  it('an unknown name is a usage error without a suggestion when nothing is close', () => {
    expect(() => parseTriggerType('invoice.paid')).toThrow('Unknown event type "invoice.paid".');
    try {
      parseTriggerType('invoice.paid');
    } catch (error) {
      expect((error as { hint?: string }).hint).toBe(`Event types: ${TRIGGER_TYPES.join(', ')}.`);
    }
  });

  it('an event type of the document without a recipe is named as such, not as unknown', () => {
    expect(() => parseTriggerType('webhook_subscription.disabled')).toThrow(
      'Event type "webhook_subscription.disabled" cannot be triggered.',
    );
  });

  it('isEventOf: the member and every id both sides have must be equal', () => {
    const created = { member_id: 'm-1', coupon_id: 'c-1', pass_code: 'P-1', email: 'x@example.test' };
    expect(isEventOf({ member_id: 'm-1', coupon_id: 'c-1', pass_id: 'p' }, created)).toBe(true);
    expect(isEventOf({ member_id: 'm-2', coupon_id: 'c-1' }, created)).toBe(false);
    expect(isEventOf({ member_id: 'm-1', coupon_id: 'c-2' }, created)).toBe(false);
    expect(isEventOf({ member_id: 'm-1', reference: 'r-1' }, { member_id: 'm-1', reference: 'r-2' })).toBe(false);
  });
});
