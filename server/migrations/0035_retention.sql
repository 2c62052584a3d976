-- Retention (services/retention.ts, the prune_old_rows task): rows older than
-- LOYALTY_RETENTION_DAYS are deleted in small batches, each found through an index so that a
-- batch is a short statement. access_tokens and idempotency_keys have their expiry indexes (0001,
-- 0002); graphile-worker's jobs table only holds waiting and failed jobs and is read as it is.
--
-- Columns that are written once: no update of a delivery or a job touches them, so the
-- delivery updates that are HOT today (0024) stay HOT.
-- BRIN, not B-tree, for the two append-only tables written in bulk (a voucher job of 100,000
-- members writes as many events and deliveries): rows arrive in created_at order, a BRIN index
-- costs next to nothing per insert (0023 and 0031 removed B-tree indexes of events for their
-- cost) and still finds the old block ranges a purge batch reads.
CREATE INDEX IF NOT EXISTS events_created_idx ON events USING brin (created_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_created_idx ON webhook_deliveries USING brin (created_at);
-- An event is kept while a delivery refers to it: a pending one sends it, a finished one can be
-- retried by hand (deliveries-log.ts, retryDelivery). The unique key is (subscription_id, event_id).
CREATE INDEX IF NOT EXISTS webhook_deliveries_event_idx ON webhook_deliveries (event_id);
CREATE INDEX IF NOT EXISTS voucher_jobs_finished_idx ON voucher_jobs (finished_at) WHERE status IN ('done', 'failed');

-- A tag's voucher grants go with it. 0020 left voucher_grants without foreign keys so that a
-- round does not lock 5,000 member and pass rows; the key to tags checks one row (the job's tag)
-- and, like the other references to rows that are deleted (0030), is kept. Grants of tags
-- deleted before this file can never be used again (ids are not reused): they go first.
DELETE FROM voucher_grants g WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE t.id = g.tag_id);
ALTER TABLE voucher_grants
  ADD CONSTRAINT voucher_grants_tag_id_fkey FOREIGN KEY (tag_id) REFERENCES tags(id) ON DELETE CASCADE;
