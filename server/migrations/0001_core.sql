-- Tenancy, clients and tokens, catalogue (from fixtures), members, passes, tags.

CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL
);

CREATE TABLE brands (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  name text NOT NULL
);
CREATE INDEX brands_organization_idx ON brands (organization_id);

CREATE TABLE coupons (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  brand_id text NOT NULL REFERENCES brands(id),
  title text NOT NULL,
  external_reference text,
  thumbnail_url text,
  valid_days integer,
  active boolean NOT NULL DEFAULT true
);

CREATE TABLE storecards (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  brand_id text NOT NULL REFERENCES brands(id),
  title text NOT NULL,
  thumbnail_url text,
  active boolean NOT NULL DEFAULT true
);

CREATE TABLE locations (
  organization_id text NOT NULL REFERENCES organizations(id),
  id text NOT NULL,
  name text NOT NULL,
  PRIMARY KEY (organization_id, id)
);

CREATE TABLE products (
  organization_id text NOT NULL REFERENCES organizations(id),
  id integer NOT NULL,
  title text NOT NULL,
  fulfillment text NOT NULL CHECK (fulfillment IN ('pickup', 'delivery')),
  PRIMARY KEY (organization_id, id)
);

CREATE TABLE product_variants (
  organization_id text NOT NULL,
  product_id integer NOT NULL,
  id integer NOT NULL,
  title text NOT NULL,
  PRIMARY KEY (organization_id, product_id, id),
  FOREIGN KEY (organization_id, product_id) REFERENCES products (organization_id, id)
);

CREATE TABLE product_values (
  organization_id text NOT NULL,
  product_id integer NOT NULL,
  id integer NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (organization_id, product_id, id),
  FOREIGN KEY (organization_id, product_id) REFERENCES products (organization_id, id)
);

CREATE TABLE promotions (
  id uuid PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  title text NOT NULL,
  active boolean NOT NULL DEFAULT true,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL
);

CREATE TABLE promotion_products (
  promotion_id uuid NOT NULL REFERENCES promotions(id),
  organization_id text NOT NULL,
  product_id integer NOT NULL,
  PRIMARY KEY (promotion_id, product_id),
  FOREIGN KEY (organization_id, product_id) REFERENCES products (organization_id, id)
);

CREATE TABLE devices (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  name text NOT NULL
);

CREATE TABLE clients (
  client_id text PRIMARY KEY,
  secret_hash bytea NOT NULL,
  device_id text REFERENCES devices(id),
  organization_ids text[] NOT NULL DEFAULT '{}',
  abilities text[] NOT NULL DEFAULT '{}'
);

-- Opaque bearer tokens; only a SHA-256 of the token is stored.
CREATE TABLE access_tokens (
  token_hash bytea PRIMARY KEY,
  client_id text NOT NULL REFERENCES clients(client_id) ON DELETE CASCADE,
  organization_ids text[] NOT NULL,
  device_id text,
  abilities text[] NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX access_tokens_expiry_idx ON access_tokens (expires_at);

-- A member is one person per organization (UUID, case-insensitive e-mail), linked to brands.
CREATE TABLE members (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  email text NOT NULL,
  first_name varchar(191),
  last_name varchar(191),
  phone_number text,
  birth_day date,
  street text,
  house_number text,
  postcode text,
  city text,
  country text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX members_organization_email_key ON members (organization_id, lower(email));

CREATE TABLE brand_members (
  brand_id text NOT NULL REFERENCES brands(id),
  member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  unsubscribed boolean NOT NULL DEFAULT false,
  subscribed_at timestamptz NOT NULL DEFAULT now(),
  favourite_location_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (brand_id, member_id)
);
CREATE INDEX brand_members_member_idx ON brand_members (member_id);

CREATE TABLE passes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  brand_id text NOT NULL REFERENCES brands(id),
  member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('coupon', 'storecard')),
  coupon_id text REFERENCES coupons(id),
  storecard_id text REFERENCES storecards(id),
  pass_code text NOT NULL UNIQUE,
  qr_code text NOT NULL,
  status text NOT NULL DEFAULT 'active',
  points integer NOT NULL DEFAULT 0 CHECK (points >= 0),
  balance integer NOT NULL DEFAULT 0 CHECK (balance >= 0),
  start_date date NOT NULL DEFAULT (now() AT TIME ZONE 'utc')::date,
  expiration_date date,
  redeemed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'coupon') = (coupon_id IS NOT NULL) AND (kind = 'storecard') = (storecard_id IS NOT NULL))
);
CREATE INDEX passes_member_idx ON passes (member_id, kind, created_at);
CREATE UNIQUE INDEX passes_one_storecard_per_member ON passes (member_id, storecard_id) WHERE kind = 'storecard';

CREATE TABLE tags (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  brand_id text NOT NULL REFERENCES brands(id),
  tag text NOT NULL,
  external_reference text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- Paths accept a tag's uuid or its external_reference, so the reference is unique per organization.
CREATE UNIQUE INDEX tags_organization_reference_key ON tags (organization_id, external_reference);
CREATE INDEX tags_brand_idx ON tags (brand_id);

CREATE TABLE tag_members (
  tag_id uuid NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
  member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tag_id, member_id)
);
CREATE INDEX tag_members_member_idx ON tag_members (member_id);

CREATE TABLE tag_passes (
  tag_id uuid NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
  pass_id uuid NOT NULL REFERENCES passes(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tag_id, pass_id)
);
