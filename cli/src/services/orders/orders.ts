// Webshop promotion orders (device token): build the order from flags or a JSON file.
import type { components } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { defined } from '../../defined.js';
import { usageError } from '../../errors.js';
import { call } from '../common/api.js';
import { readTextInput } from '../common/inputs.js';

type OrderRequest = components['schemas']['WebshopOrderRequest'];
type Product = OrderRequest['products'][number];
type ShippingAddress = components['schemas']['ShippingAddress'];

export interface OrderOptions {
  body?: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  promotion?: string;
  organization?: string;
  offPeak?: boolean;
  product: string[];
  shipping?: string;
}

function pairs(spec: string, flag: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of spec.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) throw usageError(`${flag} "${spec}": expected key=value pairs separated by commas.`);
    result[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return result;
}

const positive = (value: string, what: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw usageError(`--product: ${what} must be a whole number from 1 (got "${value}").`);
  return n;
};

/** `1`, `1x2`, or `id=1,qty=2,location=1,variant=11,value=21`. */
export function parseProduct(spec: string): Product {
  const short = /^(\d+)(?:x(\d+))?$/.exec(spec.trim());
  if (short)
    return {
      product_id: positive(defined(short[1], '--product id digits'), 'id'),
      quantity: short[2] ? positive(short[2], 'quantity') : 1,
    };
  const p = pairs(spec, '--product');
  const known = new Set(['id', 'qty', 'quantity', 'location', 'variant', 'value']);
  const unknown = Object.keys(p).find((key) => !known.has(key));
  if (unknown) throw usageError(`--product: unknown key "${unknown}".`, 'Keys: id, qty, location, variant, value.');
  if (!p.id) throw usageError(`--product "${spec}" has no id.`);
  return {
    product_id: positive(p.id, 'id'),
    quantity: positive(p.qty ?? p.quantity ?? '1', 'quantity'),
    ...(p.location ? { location_id: positive(p.location, 'location') } : {}),
    ...(p.variant ? { variant_id: positive(p.variant, 'variant') } : {}),
    ...(p.value ? { value_id: positive(p.value, 'value') } : {}),
  };
}

/** The fields of a shipping address: a Record over the document's, so none is missed or invented. */
const SHIPPING_FIELDS: Record<keyof ShippingAddress, true> = {
  first_name: true,
  last_name: true,
  address1: true,
  address2: true,
  city: true,
  country: true,
  zip: true,
};

/** `first_name=…,last_name=…,address1=…,city=…,country=…,zip=…` (address2 optional). */
export function parseShipping(spec: string): ShippingAddress {
  const given = pairs(spec, '--shipping');
  const unknown = Object.keys(given).find((key) => !(key in SHIPPING_FIELDS));
  if (unknown)
    throw usageError(`--shipping: unknown key "${unknown}".`, `Keys: ${Object.keys(SHIPPING_FIELDS).join(', ')}.`);
  const missing: string[] = [];
  const field = (key: keyof ShippingAddress): string => {
    const value = given[key];
    if (!value) missing.push(key);
    return value ?? '';
  };
  const address: ShippingAddress = {
    first_name: field('first_name'),
    last_name: field('last_name'),
    address1: field('address1'),
    ...(given.address2 ? { address2: given.address2 } : {}),
    city: field('city'),
    country: field('country'),
    zip: field('zip'),
  };
  if (missing.length) throw usageError(`--shipping "${spec}" has no ${missing.join(', ')}.`);
  return address;
}

async function readBody(ctx: Context, path: string): Promise<Partial<OrderRequest>> {
  const text = await readTextInput(ctx, path);
  try {
    return JSON.parse(text) as Partial<OrderRequest>;
  } catch (error) {
    throw usageError(`--body ${path} is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

export async function buildOrder(ctx: Context, options: OrderOptions): Promise<OrderRequest> {
  const base = options.body ? await readBody(ctx, options.body) : {};
  const order: Partial<OrderRequest> = {
    ...base,
    ...(options.firstName ? { firstname: options.firstName } : {}),
    ...(options.lastName ? { lastname: options.lastName } : {}),
    ...(options.email ? { email: options.email } : {}),
    ...(options.promotion ? { promotion_identifier: options.promotion } : {}),
    ...(options.organization ? { organization_identifier: options.organization } : {}),
    ...(options.product.length ? { products: options.product.map(parseProduct) } : {}),
    ...(options.shipping ? { shipping_address: parseShipping(options.shipping) } : {}),
  };
  order.off_peak_sale = options.offPeak ?? base.off_peak_sale ?? false;
  const missing = (
    [
      ['firstname', '--first-name'],
      ['lastname', '--last-name'],
      ['email', '--email'],
      ['promotion_identifier', '--promotion'],
      ['organization_identifier', '--organization'],
      ['products', '--product'],
    ] as const
  )
    .filter(([key]) => order[key] === undefined)
    .map(([, flag]) => flag);
  if (missing.length)
    throw usageError(`Missing ${missing.join(', ')}.`, 'Pass the flags, or a JSON order with --body <file>.');
  return order as OrderRequest;
}

export async function createOrder(ctx: Context, options: OrderOptions): Promise<void> {
  const order = await buildOrder(ctx, options);
  const answer = await call(ctx, (api, signal) => api.POST('/webshop-promotions/orders', { body: order, signal }));
  ctx.output.success(
    `${answer.message}: ${answer.result.length} promotion code${answer.result.length === 1 ? '' : 's'}.`,
  );
  if (ctx.output.json) {
    ctx.output.result(answer, () => '');
    return;
  }
  ctx.output.table(answer.result, [
    { header: 'code', value: (code) => code.code },
    {
      header: 'product',
      value: (code) => [code.product_title, code.variant, code.value].filter(Boolean).join(' · '),
      shrink: true,
    },
    { header: 'expires (UTC)', value: (code) => code.expiration_date },
    { header: 'url', value: (code) => code.url },
  ]);
}
