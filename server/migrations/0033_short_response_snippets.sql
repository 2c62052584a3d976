-- The delivery log keeps at most 64 characters of a response, on one printable line
-- (server/src/lib/safe-fetch.ts, snippetOf). Snippets recorded before kept up to 512 characters as
-- received: they take the same form (whitespace runs as one space; control, format and
-- private-use characters as U+FFFD; at most 64 characters). Whether a response was text is not
-- known for them any more; the tenant saw those bodies already.
UPDATE webhook_attempts a
SET response_snippet = s.clean
FROM (
  SELECT delivery_id, attempt, nullif(rtrim(left(btrim(regexp_replace(
           regexp_replace(response_snippet, '[\s\u0085\u2028\u2029]+', ' ', 'g'),
           '[\u0001-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ue000-\uf8ff]',
           U&'\FFFD', 'g')), 64)), '') AS clean
  FROM webhook_attempts
  WHERE response_snippet IS NOT NULL
) s
WHERE a.delivery_id = s.delivery_id AND a.attempt = s.attempt AND a.response_snippet IS DISTINCT FROM s.clean;
