-- Transactional outbox: an event row commits with the change that caused it. Webhook
-- subscriptions live here too because writing an event asks whether anyone listens.

CREATE TABLE events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,                 -- cursor order for GET /events
  organization_id text NOT NULL REFERENCES organizations(id),
  type text NOT NULL CHECK (type IN ('member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed')),
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_organization_seq_idx ON events (organization_id, seq);

CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_organization_idx ON webhook_subscriptions (organization_id);
