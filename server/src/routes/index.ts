import { healthRoutes } from './health.js';
import { metricsRoutes } from './metrics.js';
import { memberPassRoutes } from './members-passes.js';
import { memberSubscriptionRoutes } from './members-subscription.js';
import { memberRoutes } from './members.js';
import { oauthRoutes } from './oauth.js';
import { pageRoutes } from './pages.js';
import { passRoutes } from './passes.js';
import { sandboxRoutes } from './sandbox.js';
import { sandboxOrganizationRoutes } from './sandbox-organizations.js';
import { sandboxResetRoutes } from './sandbox-reset.js';
import { productRoutes } from './products.js';
import { tagRoutes } from './tags.js';
import type { RouteDef } from './types.js';
import { voucherRoutes } from './vouchers.js';
import { walletGoogleRoutes } from './wallet-google.js';
import { walletPassRoutes } from './wallet-passes.js';
import { webhookLifecycleRoutes } from './webhook-lifecycle.js';
import { webhookRoutes } from './webhooks.js';
import { webhookReplayRoutes } from './webhook-replay.js';
import { eventRoutes } from './events.js';
import { requestLogRoutes } from './request-logs.js';
import { walletAppleRoutes } from './wallet-apple.js';
import { webshopRoutes } from './webshop.js';

/** Every route of the API, listed explicitly (no file-name magic). */
export const routes: RouteDef[] = [
  ...healthRoutes,
  ...oauthRoutes,
  ...memberRoutes,
  ...memberSubscriptionRoutes,
  ...memberPassRoutes,
  ...passRoutes,
  ...webshopRoutes,
  ...productRoutes,
  ...tagRoutes,
  ...voucherRoutes,
  ...webhookRoutes,
  ...webhookLifecycleRoutes,
  ...webhookReplayRoutes,
  ...eventRoutes,
  ...requestLogRoutes,
  ...metricsRoutes,
  ...sandboxRoutes,
  ...sandboxResetRoutes,
  ...sandboxOrganizationRoutes,
  ...walletAppleRoutes,
  ...pageRoutes,
  ...walletGoogleRoutes,
  ...walletPassRoutes,
];
