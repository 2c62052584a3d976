import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { formatDateTime } from '../../lib/dates.js';
import { defined, firstRow } from '../../lib/defined.js';
import { newPassCodes, promotionCodeUrl } from '../../lib/pass-codes.js';
import { recordEvents } from '../webhooks/events.js';
import { DomainError, notFound } from '../platform/errors.js';
import { webshopError, webshopValidationError } from './webshop-errors.js';

type ShippingAddress = Schemas['ShippingAddress'];

export type WebshopOrderInput = {
  firstname: string;
  lastname: string;
  email: string;
  promotion_identifier: string;
  organization_identifier: string;
  off_peak_sale: boolean | 0 | 1;
  products: {
    product_id: number;
    quantity: number;
    location_id?: number | string;
    variant_id?: number;
    value_id?: number;
  }[];
  shipping_address?: ShippingAddress | null;
};

type ProductRow = {
  id: number;
  title: string;
  fulfillment: 'pickup' | 'delivery';
  in_promotion: boolean;
  variants: { id: number; title: string }[];
  values: { id: number; value: string }[];
};

/**
 * POST /webshop-promotions/orders with a device token. Checks, in order: the organization exists
 * (404) and is the device's (403); the promotion is the organization's (404) and active now
 * (403), these with the generic error body; every product exists in the organization and is part
 * of the promotion (422, product shape); the fields that depend on the products (pickup needs
 * `location_id`, delivery forbids it and needs `shipping_address`: 422, validation shape); the
 * location, variant and value of each line belong to the organization and the product (422,
 * product shape). The customer is matched on e-mail (case-insensitive) or created
 * (`member.created` with `brand_id: null`), and one activated code is issued per unit, valid
 * until the promotion ends.
 */
export async function createWebshopOrder(
  tx: Db,
  principal: { deviceId: string | null },
  input: WebshopOrderInput,
  baseUrl: string,
): Promise<Schemas['WebshopOrderResponse']> {
  const [org] = await tx`SELECT id FROM organizations WHERE id = ${input.organization_identifier}`;
  if (!org) throw notFound('Organization');
  const [device] = principal.deviceId
    ? await tx<
        { id: string; organization_id: string }[]
      >`SELECT id, organization_id FROM devices WHERE id = ${principal.deviceId}`
    : [];
  if (!device) throw notFound('Device');
  if (device.organization_id !== input.organization_identifier) {
    throw new DomainError('forbidden', 'forbidden', 'The organization is not authorized for this device.');
  }
  const [promotion] = await tx<{ id: string; active_now: boolean; ends_at: Date }[]>`
    SELECT id, ends_at, (active AND starts_at <= loyalty_now(organization_id) AND loyalty_now(organization_id) < ends_at) AS active_now
    FROM promotions WHERE id = ${input.promotion_identifier} AND organization_id = ${device.organization_id}`;
  if (!promotion) throw notFound('Promotion');
  if (!promotion.active_now) throw new DomainError('forbidden', 'forbidden', 'The promotion is not active.');

  const ids = [...new Set(input.products.map((p) => p.product_id))];
  const products = new Map(
    (
      await tx<ProductRow[]>`
    SELECT p.id, p.title, p.fulfillment,
           EXISTS (SELECT 1 FROM promotion_products pp WHERE pp.promotion_id = ${promotion.id} AND pp.product_id = p.id) AS in_promotion,
           coalesce((SELECT json_agg(json_build_object('id', v.id, 'title', v.title)) FROM product_variants v
                     WHERE v.organization_id = p.organization_id AND v.product_id = p.id), '[]') AS variants,
           coalesce((SELECT json_agg(json_build_object('id', v.id, 'value', v.value)) FROM product_values v
                     WHERE v.organization_id = p.organization_id AND v.product_id = p.id), '[]') AS values
    FROM products p WHERE p.organization_id = ${device.organization_id} AND p.id = ANY(${ids}::int[])`
    ).map((p) => [p.id, p]),
  );
  const unknown = ids.flatMap((id) => {
    const product = products.get(id);
    if (!product) return [`Product ${id} does not exist.`];
    if (!product.in_promotion) return [`Product ${id} is not part of this promotion.`];
    return [];
  });
  if (unknown.length) throw webshopError('unprocessable', unknown);
  // From here on every line's product is in `products` (checked just above).
  const productOf = (item: { product_id: number }) =>
    defined(products.get(item.product_id), 'the product of an order line');

  const errors: Record<string, string[]> = {};
  const fail = (field: string, message: string) => {
    const messages = errors[field];
    if (messages) messages.push(message);
    else errors[field] = [message];
  };
  input.products.forEach((item, i) => {
    const at = `products.${i}.location_id`;
    if (productOf(item).fulfillment === 'pickup') {
      if (item.location_id == null) fail(at, `The ${at} field is required for pickup products.`);
    } else if (item.location_id != null) {
      fail(at, `The ${at} field must be omitted for delivery products.`);
    }
  });
  const needsShipping = input.products.some((item) => productOf(item).fulfillment === 'delivery');
  if (needsShipping && !input.shipping_address) {
    fail('shipping_address', 'The shipping_address field is required when the order contains a delivery product.');
  }
  if (Object.keys(errors).length) throw webshopValidationError(errors);

  const locationIds = input.products.filter((p) => p.location_id != null).map((p) => String(p.location_id));
  const knownLocations = new Set(
    (
      await tx<{ id: string }[]>`
    SELECT id FROM locations WHERE organization_id = ${device.organization_id} AND id = ANY(${locationIds}::text[])`
    ).map((l) => l.id),
  );
  const mismatches = input.products.flatMap((item) => {
    const product = productOf(item);
    const problems: string[] = [];
    if (item.location_id != null && !knownLocations.has(String(item.location_id)))
      problems.push(`Location ${item.location_id} does not exist.`);
    if (item.variant_id != null && !product.variants.some((v) => v.id === item.variant_id))
      problems.push(`Variant ${item.variant_id} does not belong to product ${product.id}.`);
    if (item.value_id != null && !product.values.some((v) => v.id === item.value_id))
      problems.push(`Value ${item.value_id} does not belong to product ${product.id}.`);
    return problems;
  });
  if (mismatches.length) throw webshopError('unprocessable', [...new Set(mismatches)]);

  const address = needsShipping ? defined(input.shipping_address, 'the shipping address (checked above)') : null;
  const units = input.products.reduce((sum, item) => sum + item.quantity, 0);
  const memberId = await matchCustomer(tx, device.organization_id, input);
  const orders = await tx<{ id: string }[]>`
    INSERT INTO webshop_orders (organization_id, promotion_id, device_id, member_id, off_peak_sale, shipping_address)
    VALUES (${device.organization_id}, ${promotion.id}, ${device.id}, ${memberId}, ${Boolean(input.off_peak_sale)},
            ${address ? tx.json(address as never) : null})
    RETURNING id`;
  const order = firstRow(orders, 'the inserted order');
  const codes = newPassCodes(units);
  const lines = input.products.flatMap((item) => Array.from({ length: item.quantity }, () => item));
  const rows = lines.map((item, n) => ({
    code: defined(codes[n], 'the pass code of an order unit'),
    product_id: item.product_id,
    variant_id: item.variant_id ?? null,
    value_id: item.value_id ?? null,
    location_id: item.location_id == null ? null : String(item.location_id),
  }));
  await tx`
    INSERT INTO webshop_order_codes (order_id, organization_id, product_id, variant_id, value_id, location_id, code, expires_at)
    SELECT ${order.id}, ${device.organization_id}, r.product_id, r.variant_id, r.value_id, r.location_id, r.code, ${promotion.ends_at}
    FROM jsonb_to_recordset(${tx.json(rows as never)}) AS r(code text, product_id int, variant_id int, value_id int, location_id text)`;
  const expiration = formatDateTime(promotion.ends_at);
  return {
    success: true,
    message: 'Order created',
    shipping_address: address,
    result: rows.map((r) => {
      const product = productOf(r);
      return {
        code: r.code,
        expiration_date: expiration,
        product_title: product.title,
        url: promotionCodeUrl(baseUrl, r.code),
        variant: product.variants.find((v) => v.id === r.variant_id)?.title ?? null,
        value: product.values.find((v) => v.id === r.value_id)?.value ?? null,
      };
    }),
  };
}

/** The organization's member with this e-mail, or a new one (no brand link: a webshop is not a brand). */
async function matchCustomer(tx: Db, organizationId: string, input: WebshopOrderInput): Promise<string> {
  const [created] = await tx<{ id: string }[]>`
    INSERT INTO members (organization_id, email, first_name, last_name)
    VALUES (${organizationId}, ${input.email}, ${input.firstname}, ${input.lastname})
    ON CONFLICT (organization_id, lower(email)) DO NOTHING
    RETURNING id`;
  if (created) {
    await recordEvents(tx, [
      { organizationId, type: 'member.created', data: { member_id: created.id, brand_id: null } },
    ]);
    return created.id;
  }
  const [existing] = await tx<{ id: string }[]>`
    SELECT id FROM members WHERE organization_id = ${organizationId} AND lower(email) = lower(${input.email})`;
  return defined(existing, 'the member with this e-mail').id;
}
