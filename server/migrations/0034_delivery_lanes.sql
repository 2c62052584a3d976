-- Deliveries are sent by a few lanes per subscription (services/deliveries.ts): each lane claims
-- its subscription's next due delivery. This index finds it without reading the subscription's
-- finished deliveries or its backlog. Attempt jobs queued before lanes existed wake the lanes of
-- their subscription when they run (tasks/deliver_webhook.ts).
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (subscription_id, next_attempt_at) WHERE status = 'pending';
-- A lane's claim on a delivery while its attempt runs (a lease: a crashed lane's delivery is
-- claimed again once it has passed). Not indexed, so a claim is a HOT update.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until timestamptz;
-- A lane runs in one place at a time: a lane job takes its row (busy_until, a lease as long as a
-- slice and an attempt) and gives it back with its decision to go on, sleep or end. A second job
-- of a busy lane (woken while it ran) ends at once; the running one looks for due work again
-- before it gives the lane back.
CREATE TABLE webhook_lanes (
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  lane integer NOT NULL,
  busy_until timestamptz,
  PRIMARY KEY (subscription_id, lane)
);
