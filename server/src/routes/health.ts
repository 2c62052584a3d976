import { appOf } from '../context.js';
import type { RouteDef } from './types.js';

export const healthRoutes: RouteDef[] = [
  { method: 'GET', path: '/health', handler: () => ({ status: 'ok' }) },
  {
    method: 'GET',
    path: '/openapi.yaml',
    handler: (request, h) => h.response(appOf(request).openapi.yamlText).type('application/yaml; charset=utf-8'),
  },
];
