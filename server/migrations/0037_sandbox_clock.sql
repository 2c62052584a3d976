-- The sandbox clock (issue 16, LOYALTY_SANDBOX): the server's notion of now is the database's
-- now() plus an offset that POST /sandbox/clock moves forward (never back) and POST
-- /sandbox/reset sets to 0. One row; with sandbox mode off it stays 0 and loyalty_now() = now().
--
-- What moved to loyalty_now() (domain time), in SQL and in the services that write it:
--   * pass status and expiry: loyalty_pass_status() below; passes.start_date's default; the
--     "today" of a new coupon's expiration_date (services/passes-issue.ts);
--   * promotions' active window (starts_at / ends_at, services/webshop-orders.ts);
--   * access_tokens.expires_at, issued and checked (services/tokens.ts, retention);
--   * idempotency_keys.expires_at, set and checked (services/idempotency.ts, retention);
--   * webhook_deliveries.next_attempt_at: set by fan-out, the retry schedule, retry and recover,
--     compared by the claim, the sleep of a lane (its graphile-worker run_at is next_attempt_at
--     less the offset: real time for the job queue) and the overdue check;
--   * webhook_subscriptions.previous_secret_expires_at (the rotation overlap).
-- What stays on now() (real time, infrastructure):
--   * every lease and claim: webhook_deliveries.claimed_until, webhook_lanes.busy_until,
--     idempotency_keys.locked_until, voucher lanes' updated_at, graphile-worker's run_at and
--     locks. A lease guards exactly-once sending; a clock jump must never expire one that a
--     running attempt holds, so leases are set and compared on the one real clock only.
--   * record timestamps: created_at, updated_at, redeemed_at, disabled_at, attempted_at (and
--     the signature timestamp of a delivery, which receivers check against their own clock),
--     rate-limit windows, metrics, retention of events and attempts by created_at.
CREATE TABLE sandbox_clock (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  offset_seconds double precision NOT NULL DEFAULT 0 CHECK (offset_seconds >= 0),
  -- Resets so far: processes drop what they cached of the data before a reset (tokens).
  resets bigint NOT NULL DEFAULT 0
);
INSERT INTO sandbox_clock DEFAULT VALUES;

-- STABLE: one value per statement (like now()), one tiny row read by primary key. Measured: about
-- 5 µs more per statement, and about 1.5 µs per row where it is evaluated per row (pass statuses of
-- a list). Outside sandbox mode start-up redefines it as plain now() (services/sandbox-clock.ts,
-- defineLoyaltyNow), which PostgreSQL inlines: a production database pays nothing.
CREATE FUNCTION loyalty_now() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT now() + make_interval(secs => coalesce((SELECT offset_seconds FROM sandbox_clock WHERE one), 0))
$$;

CREATE OR REPLACE FUNCTION loyalty_pass_status(status text, expiration_date date) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN status = 'redeemed' THEN 'redeemed'
    WHEN expiration_date < (loyalty_now() AT TIME ZONE 'UTC')::date THEN 'expired'
    ELSE 'active'
  END
$$;

ALTER TABLE passes ALTER COLUMN start_date SET DEFAULT (loyalty_now() AT TIME ZONE 'utc')::date;

-- Faults on demand (plugins/sandbox-faults.ts, `Prefer: fault=<kind>;times=<n>`): how many
-- requests of one key (token, method, path, the fault preference) were seen, in real time; a key
-- unused for 10 minutes starts again. UNLOGGED like rate_limits: counters, not data.
CREATE UNLOGGED TABLE sandbox_faults (
  key text PRIMARY KEY,
  seen integer NOT NULL,
  expires_at timestamptz NOT NULL
);
