-- GET /events: a cursor that never skips an event.
--
-- events.seq comes from a sequence, and sequence values are handed out before commit: a
-- transaction can commit seq 10 after another committed seq 11, so a reader that moved its
-- cursor past 11 would never see 10. The feed therefore orders by the id of the inserting
-- transaction (then seq) and only shows events of transactions older than the oldest one still
-- running (pg_snapshot_xmin of the reader's snapshot). Every transaction below that horizon has
-- finished, and any later insert gets a transaction id at or above it, so nothing can appear
-- behind the cursor. The cost: the feed lags while a transaction that started earlier is open.
ALTER TABLE events ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_organization_txid_idx ON events (organization_id, txid, seq);

-- Long polls wait on this channel (one notification per organization per inserting statement,
-- delivered at commit) instead of querying in a loop.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('loyalty_events', o.organization_id) FROM (SELECT DISTINCT organization_id FROM new_events) o;
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
