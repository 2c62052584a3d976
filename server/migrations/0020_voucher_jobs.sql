-- Voucher jobs: issue a coupon or storecard pass to every member of a tag, in rounds.

CREATE TABLE voucher_jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  brand_id text NOT NULL REFERENCES brands(id),
  tag_id uuid NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
  voucher_kind text NOT NULL CHECK (voucher_kind IN ('coupon', 'storecard')),
  voucher_id text NOT NULL,                 -- coupons.id or storecards.id, by voucher_kind
  -- Coupon passes: 'default' (the coupon's valid_days), 'date' (expiration_date), 'none' (never expires).
  expiration_mode text NOT NULL DEFAULT 'default' CHECK (expiration_mode IN ('default', 'date', 'none')),
  expiration_date date CHECK ((expiration_mode = 'date') = (expiration_date IS NOT NULL)),
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
  total integer NOT NULL DEFAULT 0,
  processed integer NOT NULL DEFAULT 0,
  issued integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  -- Keyset position: the last tag member handled (members are taken in member_id order).
  last_member_id uuid,
  error text,
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- "One active job per tag and voucher": POST … ON CONFLICT on this index returns the running job.
CREATE UNIQUE INDEX voucher_jobs_one_active ON voucher_jobs (tag_id, voucher_kind, voucher_id)
  WHERE status IN ('queued', 'running');
CREATE INDEX voucher_jobs_tag_idx ON voucher_jobs (tag_id);
CREATE INDEX voucher_jobs_active_idx ON voucher_jobs (updated_at) WHERE status IN ('queued', 'running');

-- One row per (tag, voucher, member): written in the same transaction as the member's pass, so a
-- member gets a voucher through a tag exactly once across reruns, crashes and restarts. A failed
-- row is retried by the next job. No foreign keys on purpose: they would lock 5,000 member and
-- pass rows per round; tags and members are deleted by id and ids are never reused.
CREATE TABLE voucher_grants (
  tag_id uuid NOT NULL,
  voucher_kind text NOT NULL,
  voucher_id text NOT NULL,
  member_id uuid NOT NULL,
  job_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('issued', 'failed')),
  pass_id uuid,                             -- the issued (or, for storecards, linked) pass
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tag_id, voucher_kind, voucher_id, member_id)
);
