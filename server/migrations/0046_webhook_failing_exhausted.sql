-- The warning before a subscription is disabled (webhook_subscription.failing) and the end of a
-- delivery that used its last attempt (webhook_delivery.exhausted), both extensions (issue 29).
-- NOT VALID: every existing row satisfies the narrower check it replaces (as in 0043).
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
  CHECK (type IN ('member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed',
                  'webhook_subscription.disabled', 'pass.installed', 'pass.uninstalled',
                  'webhook_subscription.failing', 'webhook_delivery.exhausted')) NOT VALID;
