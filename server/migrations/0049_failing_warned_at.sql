-- The `webhook_subscription.failing` warning is sent once per failing streak, when the count of
-- deliveries in a row that ended failed reaches its threshold, or when the streak has lasted a
-- tenth of the time that disables the subscription (a quiet subscription may never reach the
-- count before the time rule disables it). `failing_warned_at`: when this streak was warned of;
-- NULL until then, and again when the streak ends (a delivered attempt, or enabling it).
ALTER TABLE webhook_subscriptions ADD COLUMN failing_warned_at timestamptz;

-- Streaks in progress that were warned of already (by the count rule) are not warned again.
UPDATE webhook_subscriptions s SET failing_warned_at = w.at
FROM (
  SELECT data->>'subscription_id' AS subscription_id, max(created_at) AS at
  FROM events WHERE type = 'webhook_subscription.failing'
  GROUP BY 1
) w
WHERE w.subscription_id = s.id::text AND s.failing_since IS NOT NULL AND w.at >= s.failing_since;
