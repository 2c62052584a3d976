-- Webhook subscriptions as a product (issue 15): a description, disabling by hand or
-- automatically (services/subscription-health.ts), failure counters, recovery of failed
-- deliveries, and the webhook_subscription.disabled event.
ALTER TABLE webhook_subscriptions
  ADD COLUMN description text,
  ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('manual', 'endpoint_gone', 'failing_too_long', 'too_many_failures')),
  ADD COLUMN disabled_at timestamptz,
  -- The first failed attempt since the last successful one; null after a success.
  ADD COLUMN failing_since timestamptz,
  -- Deliveries in a row that ended failed since the last one delivered.
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0;

ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
  CHECK (type IN ('member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed', 'webhook_subscription.disabled'));

-- Why a pending delivery was queued again by someone ('retry': POST …/retry, 'recover': POST …/recover);
-- null when the schedule queued it. Shown in the log's next_attempt_reason; cleared by the next attempt.
ALTER TABLE webhook_deliveries ADD COLUMN requeued_by text CHECK (requeued_by IN ('retry', 'recover'));

-- Recovery finds a subscription's failed deliveries by when they ended (their last update). Only
-- failed rows are in it, and no update of a pending delivery's claim touches its columns.
CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (subscription_id, updated_at) WHERE status = 'failed';
