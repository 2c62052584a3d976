// loyalty sandbox …: the sandbox controls of a reference server in sandbox mode (LOYALTY_SANDBOX):
// an organization's clock and a reset to its fixtures. A server that is not in sandbox mode has no
// such routes (404). A token of several organizations names one with --organization (organization_id).
import { isLoyaltyError, type LoyaltyError, toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { requestIdSuffix } from '../../request-log.js';
import { apiFailure, request, type ApiResult, type DataOf, type Send, type SendOptions } from '../common/api.js';
import { confirm } from '../common/inputs.js';

type Clock = { now: string; offset_seconds: number; real_now: string };

/** `organization_id` of a request body: the --organization given, or nothing. */
const named = (organization: string | undefined) =>
  organization === undefined ? {} : { organization_id: organization };

/** The server's 422 on organization_id, said in terms of --organization. */
function organizationFailure(error: LoyaltyError): CliError | undefined {
  const messages = error.status === 422 ? error.fields?.organization_id : undefined;
  if (!messages?.length) return undefined;
  const id = typeof error.requestId === 'string' ? error.requestId : undefined;
  return new CliError(`--organization: ${messages.join(' ')}${requestIdSuffix(id)}`, {
    hint: 'The token reaches several organizations: name one of them with --organization <id>.',
    cause: error,
  });
}

const DURATION = /^[1-9]\d{0,8}[smhd]$/;

export const notInSandboxMode = (ctx: Context): CliError =>
  new CliError(`${ctx.apiUrl} is not in sandbox mode (LOYALTY_SANDBOX).`, {
    hint: 'Start the reference server with its embedded database (`loyalty server`), or with LOYALTY_SANDBOX=1.',
  });

/**
 * A 404 means the server has no sandbox routes: it is not in sandbox mode (unless `notFound`
 * says what else it means, for an operation on one resource). A 422 on organization_id names
 * --organization.
 */
export async function sandboxCall<R extends ApiResult>(
  ctx: Context,
  send: Send<R>,
  options: SendOptions & { notFound?: (error: LoyaltyError) => CliError | undefined } = {},
): Promise<DataOf<R>> {
  const result = await request(ctx, send, options);
  const error = toLoyaltyError(result);
  if (error && isLoyaltyError(error) && error.status === 404) throw options.notFound?.(error) ?? notInSandboxMode(ctx);
  if (error) throw (isLoyaltyError(error) && organizationFailure(error)) || apiFailure(ctx, error);
  return result.data as DataOf<R>;
}

/** `2h 5m 3s` for an offset in seconds. */
export function describeOffset(seconds: number): string {
  if (seconds <= 0) return 'real time';
  const parts: string[] = [];
  let left = Math.round(seconds);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(left / size);
    if (n) parts.push(`${n}${unit}`);
    left -= n * size;
  }
  return `${parts.join(' ')} ahead of real time`;
}

function printClock(ctx: Context, clock: Clock): void {
  ctx.output.result(
    clock,
    () => `${clock.now}  (${describeOffset(clock.offset_seconds)}; real time ${clock.real_now})`,
  );
}

export async function showClock(ctx: Context, organization?: string): Promise<void> {
  const body = await sandboxCall(ctx, (api, signal) =>
    api.GET('/sandbox/clock', { params: { query: { organization_id: organization } }, signal }),
  );
  printClock(ctx, body.data);
}

export async function advanceClock(ctx: Context, duration: string, organization?: string): Promise<void> {
  if (!DURATION.test(duration))
    throw usageError(`<duration> must be a positive duration such as 30s, 15m, 2h or 7d (got "${duration}").`);
  const body = await sandboxCall(ctx, (api, signal) =>
    api.POST('/sandbox/clock', { body: { advance: duration, ...named(organization) }, signal }),
  );
  ctx.output.success(`Advanced the sandbox clock by ${duration}.`);
  printClock(ctx, body.data);
}

export async function setClock(ctx: Context, time: string, organization?: string): Promise<void> {
  const at = new Date(time);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(time) || Number.isNaN(at.getTime()))
    throw usageError(`<time> must be an RFC 3339 date-time such as 2026-12-31T09:00:00Z (got "${time}").`);
  const body = await sandboxCall(ctx, (api, signal) =>
    api.POST('/sandbox/clock', { body: { set: at.toISOString(), ...named(organization) }, signal }),
  );
  ctx.output.success(`Set the sandbox clock to ${body.data.now}.`);
  printClock(ctx, body.data);
}

export async function resetSandbox(
  ctx: Context,
  options: { yes?: boolean | undefined; organization?: string | undefined },
): Promise<void> {
  const { organization } = options;
  const whose = organization ?? "the token's organizations";
  await confirm(
    ctx,
    `Reset ${whose} at ${ctx.apiUrl} to the fixtures? Every member, pass, tag, subscription, delivery and token made since is deleted.`,
    options.yes,
  );
  const body = await sandboxCall(
    ctx,
    (api, signal) =>
      api.POST('/sandbox/reset', { ...(organization === undefined ? {} : { body: named(organization) }), signal }),
    {
      // The server answers "Organization not found." for an organization that is not the token's.
      notFound: (error) =>
        organization !== undefined && /organization/i.test(error.message)
          ? new CliError(`--organization ${organization} is not one of the token's organizations (404).`, {
              hint: 'Name one of them with --organization <id>, or leave it out to reset all of them.',
              cause: error,
            })
          : undefined,
    },
  );
  ctx.output.success(
    `Reset the sandbox to its fixtures in ${body.data.took_ms} ms (${body.data.organization_ids.join(', ')}; tokens issued before are invalid now).`,
  );
  ctx.output.result(body.data, () => '');
}
