-- Subscriptions filtered by brand and, for points.changed, by amount and type (issue 29). NULL
-- means no filter on that attribute. The fan-out and replay-missing read these columns in the
-- statement that creates the deliveries (services/webhooks/subscription-filter.ts).
ALTER TABLE webhook_subscriptions
  ADD COLUMN filter_brand_ids text[],
  ADD COLUMN filter_points_min integer CHECK (filter_points_min >= 0),
  ADD COLUMN filter_points_types text[] CHECK (filter_points_types <@ ARRAY['earn', 'spend', 'reverse']);

-- Events name their brand (additive): those recorded before this release get it from their pass.
-- Events whose pass is gone keep their data as it was.
UPDATE events e SET data = e.data || jsonb_build_object('brand_id', p.brand_id)
FROM passes p
WHERE e.type IN ('points.changed', 'coupon.issued', 'coupon.redeemed')
  AND NOT (e.data ? 'brand_id')
  AND p.id = (e.data->>'pass_id')::uuid;

-- Why a pending delivery was queued by someone: also 'replay' (POST …/replay-missing) and 'resend'
-- (POST /events/{id}/resend).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_requeued_by_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_requeued_by_check
  CHECK (requeued_by IN ('retry', 'recover', 'replay', 'resend'));
