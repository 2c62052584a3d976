-- A pass's version as Apple Wallet sees it: the Last-Modified of its .pkpass (If-Modified-Since
-- decides 304). HTTP dates have whole seconds, so two changes of a pass within one second would
-- share a Last-Modified, and a phone holding the first would get 304 for the second and miss it.
-- version_at is the whole second of the pass's latest version, always later than the version
-- before it: at most one second ahead of updated_at, and only for a pass changed twice within a
-- second. updated_at stays the true time of the change (the web service's passesUpdatedSince tags
-- compare it). Inserts take the default (voucher jobs pay nothing); updates pass the trigger.
ALTER TABLE passes ADD COLUMN version_at timestamptz NOT NULL DEFAULT date_trunc('second', now());
UPDATE passes SET version_at = date_trunc('second', updated_at) WHERE version_at <> date_trunc('second', updated_at);

CREATE FUNCTION loyalty_pass_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version_at := GREATEST(date_trunc('second', NEW.updated_at), OLD.version_at + interval '1 second');
  RETURN NEW;
END
$$;

CREATE TRIGGER passes_next_version BEFORE UPDATE ON passes
  FOR EACH ROW WHEN (NEW.updated_at IS DISTINCT FROM OLD.updated_at)
  EXECUTE FUNCTION loyalty_pass_next_version();
