/**
 * `@loyalty/sdk/wallet` (**Extension**): wallet passes from Node. Open a `.pkpass` and compare two
 * versions of it, get a pass's wallet links, and simulate a phone that holds a pass and follows
 * its updates (`WalletDevice`), for tests of what a member's wallet shows after an earn, a
 * redemption or an expiry. Its own entry: it needs `node:zlib` and `node:crypto`, which the core
 * client (browsers too) does not.
 */
import type { LoyaltyClient } from './client.js';
import type { components } from './generated/openapi.js';
import { describeError, LoyaltyError, toLoyaltyError } from './errors.js';

export { type PassChange, diffPasses } from './wallet/diff.js';
export {
  type DeviceWalletPass,
  type LatestPass,
  WalletDevice,
  type WalletDeviceOptions,
  type WalletPush,
} from './wallet/device.js';
export {
  type FlatPassField,
  PASS_STYLES,
  type PassBarcode,
  type PassField,
  type PassFieldArea,
  type PassJson,
  type PassStructure,
  type PassStyle,
  type Pkpass,
  PkpassFormatError,
  passFields,
  passStyleOf,
  readPkpass,
} from './wallet/pass-json.js';
export { readZip, ZipFormatError } from './wallet/zip.js';

/**
 * A pass's links (`GET /wallet/{code}/links`): `wallet_url` (the wallet page), `pkpass_url` (the
 * signed `.pkpass`) and `google_save_url` ("Save to Google Wallet": Google's link, the sandbox's
 * local save page, or `null` on a server with neither a Google issuer nor sandbox mode).
 */
export type WalletLinks = components['schemas']['WalletLinks'];

/**
 * The wallet links of the pass whose code is `code` (`GET /wallet/{code}/links`; no token: the
 * code is the credential). With a client, through it (its retries and pacing); with a base URL,
 * one plain request. An unknown code throws a `LoyaltyError` (`not_found`).
 */
export async function walletLinks(
  clientOrBaseUrl: LoyaltyClient | string,
  code: string,
  options: { signal?: AbortSignal; fetch?: typeof fetch } = {},
): Promise<WalletLinks> {
  if (typeof clientOrBaseUrl !== 'string') {
    const result = await clientOrBaseUrl.GET('/wallet/{code}/links', {
      params: { path: { code } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const error = toLoyaltyError(result);
    if (error) throw error;
    if (!result.data?.data) throw invalid(result.response);
    return result.data.data;
  }
  const url = `${clientOrBaseUrl.replace(/\/+$/, '')}/wallet/${encodeURIComponent(code)}/links`;
  let response: Response;
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, {
      headers: { accept: 'application/json' },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new LoyaltyError({ status: 0, code: 'network_error', message: `${url} cannot be reached`, cause: error });
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok)
    throw new LoyaltyError({ status: response.status, ...describeError(response.status, body), response, body });
  const data = (body as { data?: WalletLinks } | undefined)?.data;
  if (!data) throw invalid(response);
  return data;
}

const invalid = (response: Response) =>
  new LoyaltyError({
    status: response.status,
    code: 'invalid_response',
    message: 'GET /wallet/{code}/links answered no data',
    response,
  });
