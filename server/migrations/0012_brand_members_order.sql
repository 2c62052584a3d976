-- Members of a brand are listed in the order they joined it. A sign-up import links up to 2000
-- members in one statement (one transaction timestamp), so the order comes from a sequence the
-- insert assigns in input order, not from created_at.
ALTER TABLE brand_members ADD COLUMN seq bigserial;
DROP INDEX IF EXISTS brand_members_brand_order_idx;
CREATE INDEX brand_members_brand_seq_idx ON brand_members (brand_id, seq);
