import { expectTypeOf, test } from 'vitest';
import type { components } from './generated/openapi.js';
import { constructEvent, signPayload, verifySignature, type WebhookEvent, type WebhookEventType } from './webhooks.js';

test('constructEvent returns the union of the events of the webhooks section (recorded ones and ping)', () => {
  expectTypeOf<WebhookEvent>().toEqualTypeOf<components['schemas']['Event'] | components['schemas']['PingEvent']>();
  expectTypeOf<WebhookEventType>().toEqualTypeOf<
    | 'member.created'
    | 'points.changed'
    | 'coupon.issued'
    | 'coupon.redeemed'
    | 'webhook_subscription.disabled'
    | 'pass.installed'
    | 'pass.uninstalled'
    | 'webhook_subscription.failing'
    | 'webhook_delivery.exhausted'
    | 'ping'
  >();
  const event = constructEvent('{}', {}, 'whsec_x');
  if (event.type === 'points.changed') {
    expectTypeOf(event.data.balance).toBeNumber();
    expectTypeOf(event.data.type).toEqualTypeOf<'earn' | 'spend' | 'reverse'>();
  }
  if (event.type === 'coupon.redeemed') expectTypeOf(event.data.redeemed_at).toBeString();
  // @ts-expect-error member.created carries no points
  if (event.type === 'member.created') event.data.points;
});

test('verification takes raw bodies only', () => {
  // @ts-expect-error a parsed body is not accepted
  verifySignature({ id: 'x' }, 'abc', 'whsec_x');
  verifySignature(Buffer.from('{}'), { 'loyalty-signature': 'abc' }, ['whsec_new', 'whsec_old']);
  // @ts-expect-error verifySignature throws instead of returning a boolean
  if (verifySignature('{}', 'abc', 'whsec_x')) return;
  expectTypeOf(signPayload({ body: '{}', secret: 'whsec_x' })).toEqualTypeOf<Record<string, string>>();
});
