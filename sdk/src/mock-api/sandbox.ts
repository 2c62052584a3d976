/**
 * The throwaway sandbox organizations of the mock API: POST /sandbox/organizations and
 * DELETE /sandbox/organizations/{id}. Like the server: `ttl` is a whole number and a unit (s, m, h,
 * d), default 1h, at most 7d (422 on `ttl`); the answer has two clients with fresh secrets, which
 * `POST /oauth/token` then accepts; an unknown id is a 404. Unlike it, the mock keeps no data
 * apart per organization and does not remove expired ones.
 */
import type { HttpHandler } from 'msw';
import type { MockContext } from './context.js';
import { served } from './lifecycle.js';
import type { Schemas } from './types.js';

const TTL = /^([1-9]\d{0,8})([smhd])$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const MAX_TTL_SECONDS = 7 * 86_400;

const API_ABILITIES = [
  'tags.get',
  'tags.store',
  'members.get',
  'members.store',
  'passes.store',
  'webhooks.get',
  'webhooks.store',
];

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');

const invalid = (field: string, message: string): Schemas['ValidationError'] => ({
  message,
  error: 'validation_failed',
  errors: { [field]: [message] },
});

/** Seconds of a `ttl`, or a message saying what is wrong with it. */
function ttlSeconds(ttl: unknown): number | string {
  const match = typeof ttl === 'string' ? TTL.exec(ttl) : null;
  if (!match) return 'The ttl field must be a duration such as 30m, 1h or 2d.';
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  return seconds > MAX_TTL_SECONDS ? 'The ttl field must be at most 7d.' : seconds;
}

export function sandboxHandlers({ http, lifecycle, api }: MockContext): HttpHandler[] {
  return [
    http.post(
      '/sandbox/organizations',
      served(lifecycle, async ({ request, response }) => {
        const text = await request.text();
        const body = (text ? JSON.parse(text) : {}) as Schemas['CreateSandboxOrganizationRequest'];
        const seconds = ttlSeconds(body.ttl ?? '1h');
        if (typeof seconds === 'string') return response(422).json(invalid('ttl', seconds));
        if (
          body.name !== undefined &&
          (typeof body.name !== 'string' || body.name.length < 1 || body.name.length > 200)
        )
          return response(422).json(invalid('name', 'The name field must be 1 to 200 characters.'));
        const id = `sbx-${hex(6)}`;
        const client = (role: 'admin' | 'readonly', abilities: string[]) => ({
          client_id: `${id}-${role}`,
          client_secret: hex(16),
          abilities,
        });
        const created: Schemas['SandboxOrganizationCreated'] = {
          organization: {
            id,
            name: body.name ?? `Sandbox ${id}`,
            expires_at: new Date(Date.now() + seconds * 1000).toISOString(),
          },
          brand_id: crypto.randomUUID(),
          coupon_id: crypto.randomUUID(),
          storecard_id: crypto.randomUUID(),
          clients: {
            admin: client('admin', [...API_ABILITIES, 'sandbox.manage']),
            readonly: client(
              'readonly',
              API_ABILITIES.filter((a) => a.endsWith('.get')),
            ),
          },
        };
        api.sandboxOrganizations.set(id, created);
        return response(201).json({ message: 'Request successful', data: created });
      }),
    ),
    http.delete(
      '/sandbox/organizations/{id}',
      served(lifecycle, ({ params, response }) => {
        if (!api.sandboxOrganizations.delete(params.id))
          return response(404).json({ message: 'Organization not found.', error: 'not_found' });
        return response(204).empty();
      }),
    ),
  ];
}

/** The client of a live throwaway organization with this id, for `POST /oauth/token`. */
export function sandboxClient(
  api: MockContext['api'],
  clientId: string,
): Schemas['SandboxClientCredentials'] | undefined {
  for (const org of api.sandboxOrganizations.values())
    for (const client of [org.clients.admin, org.clients.readonly]) if (client.client_id === clientId) return client;
  return undefined;
}
