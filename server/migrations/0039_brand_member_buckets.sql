-- Where a deep page starts, without walking to it (issue 18). Measured at 1,000,000 members of
-- one brand: a page that no request of the process had walked to (services/member-pages.ts)
-- skipped up to a million index entries, 50 ms after VACUUM and 150 ms before it (index-only
-- scans fetch heap pages until the visibility map says all-visible).
--
-- brand_member_buckets counts a brand's links per bucket of 4096 consecutive seqs (seq >> 12),
-- kept by the triggers of migration 0038 in the same statement as the count, sharded the same
-- way. The links before bucket k are the sum of the brand's buckets below k, so a page at offset
-- O seeks from the start of the bucket where the running sum passes O and skips fewer than 4096
-- links of it on the index: a few hundred bucket rows read (a brand of 1,000,000 links in one
-- import spans 245 buckets), never the links before the page.
CREATE TABLE brand_member_buckets (
  brand_id text NOT NULL,
  bucket bigint NOT NULL,
  shard smallint NOT NULL,
  members bigint NOT NULL,
  PRIMARY KEY (brand_id, bucket, shard)
);

-- No link may change while the functions are replaced and the buckets backfilled.
LOCK TABLE brand_members IN SHARE ROW EXCLUSIVE MODE;

-- (brand_id, bucket, delta, changed) rows: the count per brand, the buckets per (brand, bucket),
-- both on the calling backend's shard, in key order (two statements lock rows in one order).
DROP FUNCTION brand_member_counts_add(jsonb);
CREATE FUNCTION brand_member_counts_add(deltas jsonb) RETURNS void
LANGUAGE sql AS $$
  WITH d AS (
    SELECT * FROM jsonb_to_recordset(deltas) AS d(brand_id text, bucket bigint, delta bigint, changed bigint)
  ), counted AS (
    INSERT INTO brand_member_counts AS c (brand_id, shard, members, changes)
    SELECT brand_id, pg_backend_pid() % 16, sum(delta), sum(changed) FROM d
    GROUP BY brand_id HAVING sum(changed) > 0
    ORDER BY brand_id
    ON CONFLICT (brand_id, shard) DO UPDATE
      SET members = c.members + excluded.members, changes = c.changes + excluded.changes
  )
  INSERT INTO brand_member_buckets AS b (brand_id, bucket, shard, members)
  SELECT brand_id, bucket, pg_backend_pid() % 16, sum(delta) FROM d
  GROUP BY brand_id, bucket HAVING sum(delta) <> 0
  ORDER BY brand_id, bucket
  ON CONFLICT (brand_id, bucket, shard) DO UPDATE SET members = b.members + excluded.members
$$;

CREATE OR REPLACE FUNCTION brand_members_linked() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brand_member_counts_add(coalesce(jsonb_agg(d), '[]'))
  FROM (SELECT brand_id, seq >> 12 AS bucket, count(*) AS delta, count(*) AS changed FROM linked GROUP BY 1, 2) d;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION brand_members_unlinked() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brand_member_counts_add(coalesce(jsonb_agg(d), '[]'))
  FROM (SELECT brand_id, seq >> 12 AS bucket, -count(*) AS delta, count(*) AS changed FROM unlinked GROUP BY 1, 2) d;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION brand_members_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brand_member_counts_add(coalesce(jsonb_agg(d), '[]'))
  FROM (
    SELECT brand_id, seq >> 12 AS bucket, sum(delta) AS delta, count(*) AS changed FROM (
      SELECT brand_id, seq, -1 AS delta FROM (SELECT brand_id, seq FROM before_update EXCEPT ALL SELECT brand_id, seq FROM after_update) l
      UNION ALL
      SELECT brand_id, seq, 1 FROM (SELECT brand_id, seq FROM after_update EXCEPT ALL SELECT brand_id, seq FROM before_update) a
    ) m GROUP BY 1, 2
  ) d;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION brand_members_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE brand_member_counts SET changes = changes + abs(members) + 1, members = 0;
  DELETE FROM brand_member_buckets;
  RETURN NULL;
END $$;

INSERT INTO brand_member_buckets (brand_id, bucket, shard, members)
SELECT brand_id, seq >> 12, 0, count(*) FROM brand_members GROUP BY 1, 2;
