// A vitest globalSetup that gives each test run a throwaway organization of its own on a shared
// sandbox server (README, "Parallel CI on one sandbox"), and removes it when the run ends.
//
//   // vitest.config.ts
//   export default defineConfig({ test: { globalSetup: ['./vitest-global-setup.mjs'] } });
//
//   // a test file
//   import { inject } from 'vitest';
//   const { baseUrl, clientId, clientSecret, brandId, couponId } = inject('loyalty');
//
// Credentials to create it, from the environment: LOYALTY_SANDBOX_OPERATOR_TOKEN (the server's
// operator credential), else LOYALTY_CLIENT_ID and LOYALTY_CLIENT_SECRET of a client holding
// `sandbox.create` (the demo fixtures' `sandbox-ci`). TypeScript: declare the provided value in
// `declare module 'vitest' { interface ProvidedContext { loyalty: { … } } }`.
import { createSandboxOrganization } from '@loyalty/sdk/testing/sandbox';

/** @param {{ provide(key: string, value: unknown): void }} project vitest's TestProject */
export default async function setup(project, env = process.env) {
  const operatorToken = env.LOYALTY_SANDBOX_OPERATOR_TOKEN;
  const org = await createSandboxOrganization({
    baseUrl: env.LOYALTY_API_URL ?? 'http://127.0.0.1:3000',
    ...(operatorToken
      ? { operatorToken }
      : {
          clientCredentials: {
            clientId: env.LOYALTY_CLIENT_ID ?? 'sandbox-ci',
            clientSecret: env.LOYALTY_CLIENT_SECRET,
          },
        }),
    ttl: '1h',
    name: `vitest ${env.GITHUB_RUN_ID ?? process.pid}`,
  });
  // provide() takes serializable values: the ids and the admin client, not the delete function.
  project.provide('loyalty', {
    baseUrl: org.baseUrl,
    organizationId: org.organization.id,
    brandId: org.brand_id,
    couponId: org.coupon_id,
    storecardId: org.storecard_id,
    clientId: org.clients.admin.client_id,
    clientSecret: org.clients.admin.client_secret,
  });
  return () => org.delete();
}
