import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { parseProduct } from './orders.js';

const server = fakeApiServer();

describe('parseProduct', () => {
  it('reads the short and the key=value forms', () => {
    expect(parseProduct('2')).toEqual({ product_id: 2, quantity: 1 });
    expect(parseProduct('1x3')).toEqual({ product_id: 1, quantity: 3 });
    expect(parseProduct('id=1,qty=2,location=1,variant=11,value=21')).toEqual({
      product_id: 1,
      quantity: 2,
      location_id: 1,
      variant_id: 11,
      value_id: 21,
    });
    expect(() => parseProduct('id=1,colour=red')).toThrow(/unknown key "colour"/);
    expect(() => parseProduct('id=0')).toThrow(/whole number from 1/);
  });
});

describe('loyalty orders create', { timeout: 20_000 }, () => {
  const env = async () =>
    loggedInEnv(await tempConfigHome(), {
      LOYALTY_CLIENT_ID: 'acme-pos-1',
      LOYALTY_CLIENT_SECRET: 'acme-pos-1-secret',
    });
  const flags = [
    '--first-name',
    'Ada',
    '--last-name',
    'Lovelace',
    '--email',
    'ada@example.org',
    '--organization',
    'org-acme',
    '--promotion',
    '0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10',
  ];

  it('sends the order with a real boolean off_peak_sale and prints the codes', async () => {
    let sent: unknown;
    let auth: string | null = null;
    server.use(
      http.post(`${API}/webshop-promotions/orders`, async ({ request }) => {
        sent = await request.json();
        auth = request.headers.get('authorization');
        return HttpResponse.json({
          success: true,
          message: 'Order created',
          shipping_address: null,
          result: [
            {
              code: 'PROMO-1',
              expiration_date: '2099-01-01 00:00:00',
              product_title: 'Gift box',
              url: 'https://x/1',
              variant: 'Large',
              value: '25.00',
            },
            {
              code: 'PROMO-2',
              expiration_date: '2099-01-01 00:00:00',
              product_title: 'Gift box',
              url: 'https://x/2',
              variant: 'Large',
              value: '25.00',
            },
          ],
        });
      }),
    );
    const result = await runCli(
      ['orders', 'create', ...flags, '--product', 'id=1,qty=2,location=1,variant=11,value=21'],
      { env: await env() },
    );
    expect(result.code).toBe(0);
    expect(sent).toEqual({
      firstname: 'Ada',
      lastname: 'Lovelace',
      email: 'ada@example.org',
      organization_identifier: 'org-acme',
      promotion_identifier: '0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10',
      products: [{ product_id: 1, quantity: 2, location_id: 1, variant_id: 11, value_id: 21 }],
      off_peak_sale: false,
    });
    expect(auth).toBe('Bearer token-acme-pos-1');
    expect(result.stdout).toMatch(
      /^CODE\s+PRODUCT\s+EXPIRES \(UTC\)\s+URL\nPROMO-1\s+Gift box · Large · 25\.00\s+2099-01-01 00:00:00\s+https:\/\/x\/1\n/,
    );
  });

  it('says that --body is not JSON instead of failing as a bug', async () => {
    const result = await runCli(['orders', 'create', '--body', '-'], {
      env: await env(),
      stdin: '{"firstname": "Ada",',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^✖ --body - is not valid JSON: /);
  });

  it('names the missing flags before calling the API', async () => {
    const result = await runCli(['orders', 'create', '--first-name', 'Ada'], { env: await env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Missing --last-name, --email, --promotion, --organization, --product.');
  });

  it("exits 4 on the webshop endpoint's 401", async () => {
    server.use(
      http.post(`${API}/webshop-promotions/orders`, () =>
        HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 }),
      ),
    );
    const result = await runCli(
      [
        'orders',
        'create',
        ...flags,
        '--product',
        '2',
        '--shipping',
        'first_name=Ada,last_name=L,address1=1 Main St,city=London,country=GB,zip=N1',
      ],
      { env: await env() },
    );
    expect(result.code).toBe(4);
  });
});
