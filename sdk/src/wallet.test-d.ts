import { expectTypeOf, test } from 'vitest';
import type { LoyaltyClient } from './client.js';
import {
  type DeviceWalletPass,
  diffPasses,
  type LatestPass,
  type PassChange,
  type PassJson,
  passFields,
  readPkpass,
  WalletDevice,
  walletLinks,
  type WalletLinks,
  type WalletPush,
} from './wallet.js';

// The types of @loyalty/sdk/wallet as an integrator's test meets them.
test('readPkpass, passFields and diffPasses', () => {
  const { passJson, files } = readPkpass(Buffer.alloc(0));
  expectTypeOf(passJson).toEqualTypeOf<PassJson>();
  expectTypeOf(files).toEqualTypeOf<Map<string, Buffer>>();
  expectTypeOf(passJson.storeCard?.primaryFields?.[0]?.value).toEqualTypeOf<string | number | undefined>();
  expectTypeOf(passFields(passJson)[0]?.area).toEqualTypeOf<
    'header' | 'primary' | 'secondary' | 'auxiliary' | 'back' | undefined
  >();
  expectTypeOf(diffPasses(passJson, passJson)).toEqualTypeOf<PassChange[]>();
  expectTypeOf<PassChange['message']>().toEqualTypeOf<string>();
  // @ts-expect-error a pass.json needs its identifying keys
  diffPasses({ formatVersion: 1 }, passJson);
});

test('WalletDevice and walletLinks', async () => {
  const phone = new WalletDevice({ baseUrl: 'http://127.0.0.1:3000' });
  expectTypeOf(phone.download('CODE')).toEqualTypeOf<Promise<DeviceWalletPass>>();
  expectTypeOf(phone.register()).toEqualTypeOf<Promise<{ created: boolean }>>();
  expectTypeOf(phone.waitForPush({ waitSeconds: 5 })).toEqualTypeOf<Promise<WalletPush[]>>();
  expectTypeOf(phone.updatedSerials()).toEqualTypeOf<Promise<string[]>>();
  const latest = await phone.fetchLatest();
  expectTypeOf(latest).toEqualTypeOf<LatestPass>();
  if (latest.changed) expectTypeOf(latest.changes).toEqualTypeOf<PassChange[]>();
  // @ts-expect-error only a changed pass has changes
  if (!latest.changed) latest.changes;
  // @ts-expect-error the base URL is required
  new WalletDevice({});
  expectTypeOf(walletLinks('http://127.0.0.1:3000', 'CODE')).toEqualTypeOf<Promise<WalletLinks>>();
  expectTypeOf(walletLinks).toBeCallableWith({} as LoyaltyClient, 'CODE');
  expectTypeOf<WalletLinks>().toEqualTypeOf<{
    wallet_url: string;
    pkpass_url: string;
    google_save_url: string | null;
  }>();
});
