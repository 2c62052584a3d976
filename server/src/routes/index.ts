import { healthRoutes } from './health.js';
import { oauthRoutes } from './oauth.js';
import { tagRoutes } from './tags.js';
import type { RouteDef } from './types.js';

/** Every route of the API, listed explicitly (no file-name magic). */
export const routes: RouteDef[] = [
  ...healthRoutes,
  ...oauthRoutes,
  ...tagRoutes,
];
