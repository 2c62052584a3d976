-- The request log integrators read (issue 29 item 4): one row per API request made with a token of
-- an organization (a token of several organizations: one row for each), written by the server in
-- batches (services/request-logs/request-log-buffer.ts). Only what accessLineOf gives
-- (plugins/request-log.ts): method, route template (never the URL, its query or a path value),
-- status, duration, request id, client id, and the error code of an error body. Never bodies,
-- headers, tokens or e-mail addresses.
--
-- Read per organization, newest first or after a cursor (GET /request-logs). The cursor is
-- (txid, id) like the event feed's (migration 0022): only rows of transactions below the reader's
-- snapshot xmin are shown, so a batch that commits late never lands behind a cursor already read.
--
-- Partition-friendly: no foreign key to or from it, created_at in the primary key (a later range
-- partitioning by created_at keeps the key), every index leads with organization_id or is a BRIN
-- of created_at, which retention deletes by (services/platform/retention.ts).
CREATE TABLE request_logs (
  id bigint GENERATED ALWAYS AS IDENTITY,
  txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  organization_id text NOT NULL,
  created_at timestamptz NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  status smallint NOT NULL,
  duration_ms integer NOT NULL,
  request_id text NOT NULL,
  client_id text,
  error_code text,
  PRIMARY KEY (id, created_at)
);
-- Paging and following one organization's log in cursor order.
CREATE INDEX request_logs_organization_txid_idx ON request_logs (organization_id, txid, id);
-- `since` and a request id looked up within one organization.
CREATE INDEX request_logs_organization_created_idx ON request_logs (organization_id, created_at);
CREATE INDEX request_logs_organization_request_idx ON request_logs (organization_id, request_id);
-- Retention: the rows older than the period, in batches.
CREATE INDEX request_logs_created_idx ON request_logs USING brin (created_at);
