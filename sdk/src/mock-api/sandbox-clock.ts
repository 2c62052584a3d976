/**
 * The sandbox clock and reset of the mock API: GET and POST /sandbox/clock, POST /sandbox/reset.
 * Like the server: every organization has its own clock, which only moves forward (`advance` a
 * duration, or `set` a time not before its now; at most 10 years ahead of real time); a token
 * reaching several organizations (`MockClient.organizations`) names one with `organization_id`
 * (422 naming `organization_id` when it names none, or one that is not the token's); a reset puts
 * its organizations' clocks back to real time (a named organization not the token's is a 404;
 * `scope: server` is a 403, the mock has no operator). Unlike it, a reset keeps the mock's data.
 */
import type { HttpHandler } from 'msw';
import type { MockContext } from './context.js';
import type { Lifecycle } from './lifecycle.js';
import { served } from './lifecycle.js';
import type { Schemas } from './types.js';

const DURATION = /^([1-9]\d{0,8})([smhd])$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const CAP_SECONDS = 315_576_000;
/** The organization of a client that names none. */
const DEFAULT_ORGANIZATIONS = ['org-acme'];

const invalid = (field: string, message: string): Schemas['ValidationError'] => ({
  message,
  error: 'validation_failed',
  errors: { [field]: [message] },
});

/** The organizations the request's token reaches. */
function organizationsOf(lifecycle: Lifecycle, request: Request): string[] {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return (token && lifecycle.tokenClients.get(token)?.organizations) || DEFAULT_ORGANIZATIONS;
}

/** The organization a clock request is about, or why it cannot be told (422 on organization_id). */
function clockOrganization(
  organizations: string[],
  named: string | null | undefined,
): string | Schemas['ValidationError'] {
  if (named !== undefined && named !== null)
    return organizations.includes(named)
      ? named
      : invalid('organization_id', 'The organization_id field must be one of the organizations of the token.');
  const [only, ...others] = organizations;
  return only !== undefined && !others.length
    ? only
    : invalid(
        'organization_id',
        'The organization_id field is required when the token has access to several organizations.',
      );
}

async function jsonBody<T>(request: Request): Promise<Partial<T>> {
  const text = await request.text();
  return (text ? JSON.parse(text) : {}) as Partial<T>;
}

export function sandboxClockHandlers({ http, lifecycle }: MockContext): HttpHandler[] {
  const offsets = new Map<string, number>();
  const clock = (organization: string): Schemas['SandboxClock'] => {
    const real = Date.now();
    const offset = offsets.get(organization) ?? 0;
    return {
      organization_id: organization,
      now: new Date(real + offset * 1000).toISOString(),
      offset_seconds: offset,
      real_now: new Date(real).toISOString(),
    };
  };
  return [
    http.get(
      '/sandbox/clock',
      served(lifecycle, ({ request, query, response }) => {
        const organization = clockOrganization(organizationsOf(lifecycle, request), query.get('organization_id'));
        if (typeof organization !== 'string') return response(422).json(organization);
        return response(200).json({ message: 'Request successful', data: clock(organization) });
      }),
    ),
    http.post(
      '/sandbox/clock',
      served(lifecycle, async ({ request, response }) => {
        const body = await jsonBody<Schemas['MoveSandboxClockRequest']>(request);
        const organization = clockOrganization(organizationsOf(lifecycle, request), body.organization_id);
        if (typeof organization !== 'string') return response(422).json(organization);
        if ((body.advance === undefined) === (body.set === undefined))
          return response(422).json(invalid('advance', 'Send exactly one of advance and set.'));
        const current = offsets.get(organization) ?? 0;
        let next: number;
        if (body.advance !== undefined) {
          const match = DURATION.exec(body.advance);
          if (!match)
            return response(422).json(
              invalid('advance', 'The advance field must be a positive duration such as 30s, 15m, 2h or 7d.'),
            );
          next = current + Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
          if (next > CAP_SECONDS)
            return response(422).json(invalid('advance', 'The advance field would put the clock beyond 10 years.'));
        } else {
          const target = Date.parse(body.set as string);
          if (Number.isNaN(target))
            return response(422).json(invalid('set', 'The set field must be an RFC 3339 date-time.'));
          next = (target - Date.now()) / 1000;
          if (next < current)
            return response(422).json(invalid('set', 'The set field must not be before the sandbox clock.'));
          if (next > CAP_SECONDS)
            return response(422).json(invalid('set', 'The set field must be at most 10 years ahead of real time.'));
        }
        offsets.set(organization, next);
        return response(200).json({ message: 'Request successful', data: clock(organization) });
      }),
    ),
    http.post(
      '/sandbox/reset',
      served(lifecycle, async ({ request, response }) => {
        const body = await jsonBody<Schemas['SandboxResetRequest']>(request);
        if (body.scope === 'server')
          return response(403).json({
            message: 'Only the sandbox operator (LOYALTY_SANDBOX_OPERATOR_TOKEN) may reset the whole server.',
            error: 'forbidden',
          });
        const organizations = organizationsOf(lifecycle, request);
        if (body.organization_id !== undefined && !organizations.includes(body.organization_id))
          return response(404).json({ message: 'Organization not found.', error: 'not_found' });
        const reset = body.organization_id !== undefined ? [body.organization_id] : organizations;
        for (const organization of reset) offsets.delete(organization);
        const [only, ...others] = reset;
        const { organization_id: _whose, ...realTime } = clock('');
        return response(200).json({
          message: 'Request successful',
          data: {
            took_ms: 0,
            scope: 'organizations',
            organization_ids: reset,
            clock: only !== undefined && !others.length ? clock(only) : realTime,
          },
        });
      }),
    ),
  ];
}
