import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';

type ProductDetails = Schemas['Product'];

/**
 * POST /products/batch: the products of the device's organization with these ids, in the order
 * asked (duplicates once), and the ids it does not have. Products of other organizations are
 * reported as not found, exactly like unknown ids.
 */
export async function findProducts(
  db: Db,
  organizationIds: string[],
  productIds: number[],
): Promise<{ data: ProductDetails[]; not_found: number[] }> {
  const ids = [...new Set(productIds)];
  const rows = await db<ProductDetails[]>`
    SELECT p.id, p.title, p.fulfillment,
           coalesce((SELECT json_agg(json_build_object('id', v.id, 'title', v.title) ORDER BY v.id) FROM product_variants v
                     WHERE v.organization_id = p.organization_id AND v.product_id = p.id), '[]') AS variants,
           coalesce((SELECT json_agg(json_build_object('id', v.id, 'value', v.value) ORDER BY v.id) FROM product_values v
                     WHERE v.organization_id = p.organization_id AND v.product_id = p.id), '[]') AS values
    FROM products p
    WHERE p.organization_id = ANY(${organizationIds}) AND p.id = ANY(${ids}::int[])
    ORDER BY p.organization_id`;
  const byId = new Map<number, ProductDetails>();
  for (const row of rows) if (!byId.has(row.id)) byId.set(row.id, row);
  const data: ProductDetails[] = [];
  const notFound: number[] = [];
  for (const id of ids) {
    const product = byId.get(id);
    if (product) data.push(product);
    else notFound.push(id);
  }
  return { data, not_found: notFound };
}
