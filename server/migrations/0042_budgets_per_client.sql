-- Budgets per client (issue 25): no tenant slows another through what they share.

-- Long polls (GET /events?wait=) wake only for their own organization's events: the notification
-- carries the organization again (0022 did, 0023 dropped it to save collecting them), one per
-- organization per inserting statement, delivered at commit (services/event-feed.ts). Collecting
-- the distinct organizations of the transition table costs about 0.3 ms for a 5,000-row statement
-- (one organization), little beside the insert itself; waking every waiter of every tenant on
-- every commit cost far more under many polls (issue 25, finding 6).
DROP TRIGGER events_notify ON events;
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('loyalty_events', o.organization_id) FROM (SELECT DISTINCT organization_id FROM new_events) o;
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

-- Live tokens per client are capped (services/tokens.ts, issueToken): issuing one past the cap
-- deletes the client's oldest, found by this index.
CREATE INDEX access_tokens_client_idx ON access_tokens (client_id, created_at);

-- Fault counters (plugins/sandbox-faults.ts) belong to the client of the token that set them, so
-- their number is bounded per client; expired ones are purged. Counters, not data: emptied here.
TRUNCATE sandbox_faults;
ALTER TABLE sandbox_faults ADD COLUMN client_id text NOT NULL;
CREATE INDEX sandbox_faults_client_idx ON sandbox_faults (client_id, expires_at);
CREATE INDEX sandbox_faults_expiry_idx ON sandbox_faults (expires_at);
