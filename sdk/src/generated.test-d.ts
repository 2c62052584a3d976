// Type-level tests: the generated `paths` drive openapi-fetch, so documented calls compile and
// undocumented ones do not. Checked by `vitest` typecheck (sdk project); nothing here runs.
import createClient from 'openapi-fetch';
import { describe, expectTypeOf, it } from 'vitest';
import type { components, paths, webhooks } from './generated/openapi.js';

type Schemas = components['schemas'];
const client = createClient<paths>({ baseUrl: 'http://localhost:3000' });

describe('generated openapi types with openapi-fetch', () => {
  it('types GET /tags and its response', async () => {
    const { data, error } = await client.GET('/tags');
    expectTypeOf(data).toEqualTypeOf<Schemas['TagListResponse'] | undefined>();
    expectTypeOf(data!.data[0]!.uuid).toBeString();
    expectTypeOf(error).toEqualTypeOf<Schemas['Error'] | Schemas['RateLimitError'] | undefined>();
  });

  it('accepts the documented POST /tags body and rejects a wrong one', () => {
    void client.POST('/tags', { body: { brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP customers' } });
    // @ts-expect-error `tag` is required
    void client.POST('/tags', { body: { brand_id: 'brand-acme', external_reference: 'vip' } });
    // @ts-expect-error `tag` is a string
    void client.POST('/tags', { body: { brand_id: 'brand-acme', external_reference: 'vip', tag: 42 } });
    // @ts-expect-error POST /tags needs a body
    void client.POST('/tags', {});
  });

  it('requires the query parameters of GET endpoints the spec gives a JSON body', () => {
    void client.GET('/tags/passes', { params: { query: { tag_id: 'vip', brand_id: 'brand-acme' } } });
    // @ts-expect-error brand_id is required
    void client.GET('/tags/passes', { params: { query: { tag_id: 'vip' } } });
  });

  it('expresses exactly one of coupon_id and storecard_id', () => {
    const params = { path: { uuid: '0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d' } };
    void client.POST('/members/{uuid}/passes', {
      params,
      body: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' },
    });
    void client.POST('/members/{uuid}/passes', {
      params,
      body: { brand_id: 'brand-acme', storecard_id: 'card-points' },
    });
    void client.POST('/members/{uuid}/passes', {
      params,
      // @ts-expect-error both ids
      body: { brand_id: 'brand-acme', coupon_id: 'c', storecard_id: 's' },
    });
  });

  it('types webhook event envelopes as a union told apart by `type`', () => {
    type Delivered = NonNullable<webhooks['coupon.redeemed']['post']['requestBody']>['content']['application/json'];
    expectTypeOf<Delivered['type']>().toEqualTypeOf<'coupon.redeemed'>();
    expectTypeOf<Extract<Schemas['Event'], { type: 'points.changed' }>['data']['balance']>().toBeNumber();
  });
});
