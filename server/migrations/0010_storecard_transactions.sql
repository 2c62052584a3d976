-- Storecard point transactions (POST /passes/scan/storecard) and the indexes members and passes
-- need. A transaction_reference is unique per pass: a repeated reference finds the first row
-- through ON CONFLICT and replays it, so the pass totals after each transaction are kept with it.

CREATE TABLE storecard_transactions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  pass_id uuid NOT NULL REFERENCES passes(id) ON DELETE CASCADE,
  transaction_reference text NOT NULL CHECK (length(transaction_reference) BETWEEN 1 AND 191),
  type text NOT NULL CHECK (type IN ('earn', 'spend', 'reverse')),
  points integer NOT NULL CHECK (points >= 1),
  reverses_id uuid REFERENCES storecard_transactions(id) ON DELETE CASCADE,
  pass_points integer NOT NULL,
  pass_balance integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT storecard_transactions_reference_key UNIQUE (pass_id, transaction_reference),
  CHECK ((type = 'reverse') = (reverses_id IS NOT NULL))
);
-- A transaction is reversed at most once.
CREATE UNIQUE INDEX storecard_transactions_reversed_once ON storecard_transactions (reverses_id) WHERE reverses_id IS NOT NULL;

-- Members of a brand in list order (POST /members/list streams 100,000 of them in this order).
CREATE INDEX brand_members_brand_order_idx ON brand_members (brand_id, created_at, member_id);
-- Passes of a member in one brand (member get, coupons, storecards, delete).
CREATE INDEX passes_member_brand_idx ON passes (member_id, brand_id, kind, created_at);

-- A pass's status as the API shows it (docs/decisions.md): a coupon pass is `redeemed` once
-- scanned, otherwise `expired` after its expiration date (valid through the end of that UTC day),
-- otherwise `active`; a storecard pass is `active` or `expired`. Only `active`/`redeemed` are stored.
CREATE FUNCTION loyalty_pass_status(status text, expiration_date date) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN status = 'redeemed' THEN 'redeemed'
    WHEN expiration_date < (now() AT TIME ZONE 'UTC')::date THEN 'expired'
    ELSE 'active'
  END
$$;
