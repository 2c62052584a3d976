-- GET /tags is the hot read. Each tag keeps its API representation (the Tag object of
-- openapi.yaml as JSON text, timestamps RFC 3339 UTC with milliseconds), written by a trigger
-- whenever the row changes, so listing is one string_agg: no per-row formatting on every read.
-- to_json() escapes the free-text values; a uuid and the timestamps need no escaping.

ALTER TABLE tags ADD COLUMN api_json text;

CREATE FUNCTION tags_api_json() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.api_json := '{"tag":' || to_json(NEW.tag)
    || ',"external_reference":' || to_json(NEW.external_reference)
    || ',"uuid":"' || NEW.id
    || '","created_at":"' || to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","updated_at":"' || to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","brand_id":' || to_json(NEW.brand_id)
    || '}';
  RETURN NEW;
END
$$;

CREATE TRIGGER tags_api_json BEFORE INSERT OR UPDATE ON tags FOR EACH ROW EXECUTE FUNCTION tags_api_json();

UPDATE tags SET api_json = NULL; -- the trigger fills it in
ALTER TABLE tags ALTER COLUMN api_json SET NOT NULL;

-- The list reads one organization's tags in creation order.
CREATE INDEX tags_organization_created_idx ON tags (organization_id, created_at, id);
