-- The member count of a brand, kept by PostgreSQL instead of counted (issue 18: POST /members/list
-- ran count(*) over all of a brand's links on every page: 0.8 s at 1.1M members).
--
-- Statement-level triggers with transition tables add each statement's delta per brand to
-- brand_member_counts in the statement's own transaction, so the count commits (or rolls back)
-- with the links: it is exact in every snapshot. A brand's count is the sum of its rows.
--
-- Shards: one row per (brand, shard), the shard being the writing backend's pid modulo 16. A
-- single row per brand would be locked by every linking transaction until its commit, so
-- concurrent imports into one brand would run one after the other; with shards two of them wait
-- for each other only when their backends share a shard.
--
-- `changes` counts the links each statement added or removed (never decreases): the sum over a
-- brand's shards changes with every committed change to the brand's list, so the list pages cache
-- what they learnt about the list under it (services/member-pages.ts). `born` comes from a sequence
-- that no TRUNCATE … RESTART IDENTITY restarts (it belongs to no column): when this table is
-- emptied (POST /sandbox/reset truncates every table) the rows written afterwards are born later,
-- so (sum of changes, max of born) never repeats a version of the list from before.
CREATE SEQUENCE brand_member_counts_born;

CREATE TABLE brand_member_counts (
  brand_id text NOT NULL,
  shard smallint NOT NULL,
  members bigint NOT NULL,
  changes bigint NOT NULL,
  born bigint NOT NULL DEFAULT nextval('brand_member_counts_born'),
  PRIMARY KEY (brand_id, shard)
);

-- Adds (brand_id, delta, changed) rows to the calling backend's shard. Sorted by brand so two
-- statements touching the same brands lock their rows in the same order.
CREATE FUNCTION brand_member_counts_add(deltas jsonb) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO brand_member_counts AS c (brand_id, shard, members, changes)
  SELECT d.brand_id, pg_backend_pid() % 16, d.delta, d.changed
  FROM jsonb_to_recordset(deltas) AS d(brand_id text, delta bigint, changed bigint)
  WHERE d.changed > 0
  ORDER BY d.brand_id
  ON CONFLICT (brand_id, shard) DO UPDATE
    SET members = c.members + excluded.members, changes = c.changes + excluded.changes
$$;

CREATE FUNCTION brand_members_linked() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brand_member_counts_add(coalesce(jsonb_agg(d), '[]'))
  FROM (SELECT brand_id, count(*) AS delta, count(*) AS changed FROM linked GROUP BY brand_id) d;
  RETURN NULL;
END $$;

CREATE FUNCTION brand_members_unlinked() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brand_member_counts_add(coalesce(jsonb_agg(d), '[]'))
  FROM (SELECT brand_id, -count(*) AS delta, count(*) AS changed FROM unlinked GROUP BY brand_id) d;
  RETURN NULL;
END $$;

-- An UPDATE changes a brand's list only where it moves a link (brand_id or seq): the links that
-- left (old minus new) and arrived (new minus old). Subscribing and unsubscribing change neither.
CREATE FUNCTION brand_members_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brand_member_counts_add(coalesce(jsonb_agg(d), '[]'))
  FROM (
    SELECT brand_id, sum(delta) AS delta, count(*) AS changed FROM (
      SELECT brand_id, -1 AS delta FROM (SELECT brand_id, seq FROM before_update EXCEPT ALL SELECT brand_id, seq FROM after_update) l
      UNION ALL
      SELECT brand_id, 1 FROM (SELECT brand_id, seq FROM after_update EXCEPT ALL SELECT brand_id, seq FROM before_update) a
    ) m GROUP BY brand_id
  ) d;
  RETURN NULL;
END $$;

-- TRUNCATE brand_members: every count becomes 0 and every brand's version moves on.
CREATE FUNCTION brand_members_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE brand_member_counts SET changes = changes + abs(members) + 1, members = 0;
  RETURN NULL;
END $$;

CREATE TRIGGER brand_members_count_linked AFTER INSERT ON brand_members
  REFERENCING NEW TABLE AS linked FOR EACH STATEMENT EXECUTE FUNCTION brand_members_linked();
CREATE TRIGGER brand_members_count_unlinked AFTER DELETE ON brand_members
  REFERENCING OLD TABLE AS unlinked FOR EACH STATEMENT EXECUTE FUNCTION brand_members_unlinked();
CREATE TRIGGER brand_members_count_moved AFTER UPDATE ON brand_members
  REFERENCING OLD TABLE AS before_update NEW TABLE AS after_update
  FOR EACH STATEMENT EXECUTE FUNCTION brand_members_moved();
CREATE TRIGGER brand_members_count_truncated AFTER TRUNCATE ON brand_members
  FOR EACH STATEMENT EXECUTE FUNCTION brand_members_truncated();

-- The links so far. The triggers above already hold brand_members' SHARE ROW EXCLUSIVE lock
-- (CREATE TRIGGER) until this migration commits, so no link is missed or counted twice.
INSERT INTO brand_member_counts (brand_id, shard, members, changes)
SELECT brand_id, 0, count(*), count(*) FROM brand_members GROUP BY brand_id;
