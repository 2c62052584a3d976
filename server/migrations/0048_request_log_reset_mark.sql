-- A sandbox reset empties an organization's request log, but another API process (LOYALTY_API_PROCESSES,
-- or a second server on the same database) may still hold entries of requests made before the reset
-- in its buffer (written every 250 ms: services/request-logs/request-log-buffer.ts) and write them
-- after it. `request_log_since` is when the organization's last reset began: the writer leaves out
-- entries of requests answered before it (received + duration). NULL: never reset.
ALTER TABLE organizations ADD COLUMN request_log_since timestamptz;
