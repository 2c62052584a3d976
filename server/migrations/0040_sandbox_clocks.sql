-- The sandbox clock per organization (issue 25): one organization's clock moves alone. Before,
-- one row of sandbox_clock moved every tenant's time at once (acme's advance expired globex's
-- tokens, passes, retries and rotation overlap), and an offset no statement could add to now()
-- (`advance 999999999d`) bricked the server until the row was repaired by hand.
--
-- sandbox_clocks: an organization's offset, in seconds ahead of real time; no row means 0 (a reset
-- of the organization deletes it). The cap, 10 years (10 × 365.25 days), is a CHECK as well as a
-- condition of the statement that moves it (services/sandbox-clock.ts): every timestamp and date
-- computed from a clock stays far inside PostgreSQL's and JavaScript's ranges.
CREATE TABLE sandbox_clocks (
  organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  offset_seconds double precision NOT NULL DEFAULT 0 CHECK (offset_seconds >= 0 AND offset_seconds <= 315576000)
);

-- sandbox_clock keeps its row and its `resets` (the count of resets, the processes' cache
-- generation); its offset_seconds is no longer read.

-- Idempotency keys carry their token's organizations, so a key's lifetime follows their clock
-- (the latest of them, like the token's) when it is checked and when retention purges it.
ALTER TABLE idempotency_keys ADD COLUMN organization_ids text[] NOT NULL DEFAULT '{}';

-- loyalty_now(org): the organization's now. loyalty_now_latest(orgs): the latest now of several
-- organizations (a token's, an idempotency key's: a token of several organizations ends when the
-- clock of any of them has passed its expiry). loyalty_now(): real time, for what belongs to no
-- organization. Outside sandbox mode start-up redefines the first two as plain now(), which
-- PostgreSQL inlines (services/sandbox-clock.ts, defineLoyaltyNow): a production database pays
-- nothing. In sandbox mode each costs one primary-key read per evaluation (about 1.5 µs).
CREATE FUNCTION loyalty_now(org text) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT now() + make_interval(secs => coalesce((SELECT offset_seconds FROM sandbox_clocks WHERE organization_id = org), 0))
$$;

CREATE FUNCTION loyalty_now_latest(orgs text[]) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT now() + make_interval(secs => coalesce((SELECT max(offset_seconds) FROM sandbox_clocks WHERE organization_id = ANY(orgs)), 0))
$$;

CREATE OR REPLACE FUNCTION loyalty_now() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT now() $$;

CREATE FUNCTION loyalty_pass_status(status text, expiration_date date, org text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN status = 'redeemed' THEN 'redeemed'
    WHEN expiration_date < (loyalty_now(org) AT TIME ZONE 'UTC')::date THEN 'expired'
    ELSE 'active'
  END
$$;

-- The old form would answer on real time: gone, so no statement keeps using it by mistake.
DROP FUNCTION loyalty_pass_status(text, date);

-- A pass's start date is its organization's today: written by the statements that issue passes;
-- the default (loyalty_now() is real time now) is what a statement that names none gets.
ALTER TABLE passes ALTER COLUMN start_date SET DEFAULT (now() AT TIME ZONE 'utc')::date;
