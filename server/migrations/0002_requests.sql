-- Per-request state shared by every server process: rate-limit windows and idempotency keys.

-- Counters are cheap to lose on a crash (a window restarts), so the table skips the WAL.
CREATE UNLOGGED TABLE rate_limits (
  bucket text PRIMARY KEY,
  window_start bigint NOT NULL,
  count integer NOT NULL
);

CREATE TABLE idempotency_keys (
  scope_hash bytea PRIMARY KEY,            -- sha256(token hash, method, path, key)
  request_hash bytea NOT NULL,             -- sha256(body, query string)
  state text NOT NULL CHECK (state IN ('in_progress', 'done')),
  locked_until timestamptz,                -- an in-progress claim older than this was abandoned by a crash
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL DEFAULT now() + interval '24 hours'
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
