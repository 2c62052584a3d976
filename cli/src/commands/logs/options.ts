import { Option } from 'commander';
import { organizationOption } from '../options.js';

/** The filters `logs tail` and `logs list` share. */
export const logFilterOptions = (): Option[] => [
  new Option('--status <status>', 'a status class (2xx, 4xx, 5xx) or one code (404)'),
  new Option('--method <method>', 'GET, HEAD, POST, PUT, PATCH or DELETE'),
  new Option('--path <template>', 'a route template or its start by segments (/members matches /members/{uuid})'),
  new Option('--request-id <id>', "one request's X-Request-Id"),
  new Option('--since <when>', 'entries from this long ago (30s, 10m, 2h, 1d) or an ISO date-time'),
  organizationOption(),
];
