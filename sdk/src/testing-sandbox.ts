/**
 * `@loyalty/sdk/testing/sandbox`: a throwaway organization of its own on a reference server in
 * sandbox mode, for one test run (parallel CI jobs on one server each take one). Made for a vitest
 * `globalSetup` (sdk/examples/vitest-global-setup.mjs): it needs neither msw nor vitest.
 *
 *     const org = await createSandboxOrganization({
 *       baseUrl: 'http://127.0.0.1:3000',
 *       clientCredentials: { clientId: 'sandbox-ci', clientSecret: process.env.SANDBOX_CI_SECRET },
 *       ttl: '1h',
 *     });
 *     // org.brand_id, org.coupon_id, org.clients.admin.client_id / client_secret, …
 *     await org.delete();
 *
 * Credentials: a client holding `sandbox.create` (the fixture client `sandbox-ci`), or the server's
 * operator credential (`LOYALTY_SANDBOX_OPERATOR_TOKEN`) as `operatorToken`. The answer's client
 * secrets are shown by the server only once; keep them out of logs.
 */
import type { ClientCredentials } from './auth.js';
import { createLoyaltyClient, type LoyaltyClientOptions } from './client.js';
import { toLoyaltyError } from './errors.js';
import type { components } from './generated/openapi.js';

type Created = components['schemas']['SandboxOrganizationCreated'];

export type CreateSandboxOrganizationOptions = {
  /** The sandbox server, for example `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Time to live in real time: `30m`, `1h` (the server's default), `2d`; at most `7d`. */
  ttl?: string;
  /** The organization's name (the server's default: `Sandbox <id>`). */
  name?: string;
  /** Transport (default: the global `fetch`). */
  fetch?: LoyaltyClientOptions['fetch'];
  signal?: AbortSignal;
} & (
  | {
      /** A client with `sandbox.create`, e.g. `sandbox-ci`. */ clientCredentials: ClientCredentials;
      operatorToken?: never;
    }
  | { /** The server's `LOYALTY_SANDBOX_OPERATOR_TOKEN`. */ operatorToken: string; clientCredentials?: never }
);

/** The server's answer (`SandboxOrganizationCreated`), its base URL, and a way to remove it. */
export type SandboxOrganization = Created & {
  baseUrl: string;
  /**
   * Removes the organization and all its data at once (`DELETE /sandbox/organizations/{id}`, with
   * the credentials that created it). One already gone (deleted, or removed by retention after
   * its ttl) is not an error. Other refusals throw their `LoyaltyError`.
   */
  delete(options?: { signal?: AbortSignal }): Promise<void>;
};

/** Creates a throwaway sandbox organization (`POST /sandbox/organizations`); a refusal throws its `LoyaltyError`. */
export async function createSandboxOrganization(
  options: CreateSandboxOrganizationOptions,
): Promise<SandboxOrganization> {
  const { baseUrl, ttl, name, fetch, signal, clientCredentials, operatorToken } = options;
  if (Boolean(clientCredentials) === Boolean(operatorToken))
    throw new TypeError('createSandboxOrganization needs clientCredentials or operatorToken (one of them).');
  const common = { baseUrl, ...(fetch ? { fetch } : {}), userAgent: 'loyalty-sdk/testing-sandbox' };
  const client = createLoyaltyClient(
    clientCredentials ? { ...common, clientCredentials } : { ...common, token: operatorToken as string },
  );
  const body = { ...(ttl !== undefined ? { ttl } : {}), ...(name !== undefined ? { name } : {}) };
  const result = await client.POST('/sandbox/organizations', {
    ...(Object.keys(body).length ? { body } : {}),
    ...(signal ? { signal } : {}),
  });
  const error = toLoyaltyError(result);
  if (error || !result.data) throw error ?? new Error('POST /sandbox/organizations answered no body.');
  const created = result.data.data;
  return {
    ...created,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    async delete(deleteOptions = {}) {
      const removed = await client.DELETE('/sandbox/organizations/{id}', {
        params: { path: { id: created.organization.id } },
        ...(deleteOptions.signal ? { signal: deleteOptions.signal } : {}),
      });
      const refused = toLoyaltyError(removed);
      if (refused && refused.status !== 404) throw refused;
    },
  };
}
