-- Every attempt updates its delivery row (status, attempts, next_attempt_at) without touching an
-- indexed column: with room left on each page those updates stay HOT (no index writes).
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
