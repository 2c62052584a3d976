-- Webhook deliveries: one row per (subscription, event), one attempt row per HTTP request sent.

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial NOT NULL,                   -- cursor order of the delivery log (newest first)
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  event_id uuid NOT NULL,                   -- events are never deleted; no FK to keep fan-out cheap
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,      -- attempts recorded so far
  max_attempts integer NOT NULL DEFAULT 8,  -- a manual retry of a finished delivery allows one more
  next_attempt_at timestamptz,              -- set while pending
  delivered_at timestamptz,                 -- first 2xx
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, event_id)
);
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (subscription_id, seq DESC);

CREATE TABLE webhook_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  duration_ms integer NOT NULL,
  response_snippet text,
  attempted_at timestamptz NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
