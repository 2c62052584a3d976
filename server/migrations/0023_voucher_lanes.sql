-- A voucher job runs in lanes: the tag's members split by the last byte of their uuid, one
-- round at a time per lane, so a large job uses several database connections (and worker
-- processes) at once. Each lane keeps its own keyset cursor.
ALTER TABLE voucher_jobs ADD COLUMN lanes integer NOT NULL DEFAULT 1 CHECK (lanes BETWEEN 1 AND 16);
ALTER TABLE voucher_jobs DROP COLUMN last_member_id;

CREATE TABLE voucher_job_lanes (
  job_id uuid NOT NULL REFERENCES voucher_jobs(id) ON DELETE CASCADE,
  lane integer NOT NULL,
  last_member_id uuid,                      -- the last tag member this lane handled
  done boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, lane)
);
CREATE INDEX voucher_job_lanes_open_idx ON voucher_job_lanes (updated_at) WHERE NOT done;

-- Long polls only need to know that some events committed; waking every waiter of the process
-- is cheaper than collecting the organizations of a 5,000-row statement (transition table).
DROP TRIGGER events_notify ON events;
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('loyalty_events', '');
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

-- GET /events reads through events_organization_txid_idx (0022); the (organization_id, seq)
-- index of 0003 was there for the feed and no query uses it any more. One index less to
-- maintain on the hottest insert path (a voucher job writes 100,000 events).
DROP INDEX events_organization_seq_idx;
