-- A pass's version time (updated_at) is what Apple's web service answers as Last-Modified, and
-- HTTP dates have whole seconds: two changes within one second would have the same Last-Modified,
-- and a phone holding the first would get 304 for the second and miss it. So every change of a
-- pass row moves updated_at into a later whole second than the version before it: at most one
-- second ahead of now(), and only for a pass changed twice within a second (scans, redemptions;
-- voucher jobs insert passes and never pass through this trigger).
CREATE FUNCTION loyalty_pass_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := GREATEST(NEW.updated_at, date_trunc('second', OLD.updated_at) + interval '1 second');
  RETURN NEW;
END
$$;

CREATE TRIGGER passes_next_version BEFORE UPDATE ON passes
  FOR EACH ROW WHEN (NEW.updated_at IS DISTINCT FROM OLD.updated_at)
  EXECUTE FUNCTION loyalty_pass_next_version();
