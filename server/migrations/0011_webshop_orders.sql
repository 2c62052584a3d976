-- Webshop promotion orders (POST /webshop-promotions/orders): one order per request and one
-- activated promotion code per ordered unit.

CREATE TABLE webshop_orders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id text NOT NULL REFERENCES organizations(id),
  promotion_id uuid NOT NULL REFERENCES promotions(id),
  device_id text REFERENCES devices(id),
  -- The customer; kept as an order record when the member is deleted later.
  member_id uuid REFERENCES members(id) ON DELETE SET NULL,
  off_peak_sale boolean NOT NULL,
  shipping_address jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webshop_orders_organization_idx ON webshop_orders (organization_id, created_at);
CREATE INDEX webshop_orders_member_idx ON webshop_orders (member_id);

CREATE TABLE webshop_order_codes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  order_id uuid NOT NULL REFERENCES webshop_orders(id) ON DELETE CASCADE,
  organization_id text NOT NULL,
  product_id integer NOT NULL,
  variant_id integer,
  value_id integer,
  location_id text,
  code text NOT NULL UNIQUE,
  activated_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  FOREIGN KEY (organization_id, product_id) REFERENCES products (organization_id, id),
  FOREIGN KEY (organization_id, product_id, variant_id) REFERENCES product_variants (organization_id, product_id, id),
  FOREIGN KEY (organization_id, product_id, value_id) REFERENCES product_values (organization_id, product_id, id),
  FOREIGN KEY (organization_id, location_id) REFERENCES locations (organization_id, id)
);
CREATE INDEX webshop_order_codes_order_idx ON webshop_order_codes (order_id);
