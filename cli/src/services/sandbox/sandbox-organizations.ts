// loyalty sandbox create / delete: throwaway sandbox organizations (POST and DELETE
// /sandbox/organizations) for one test run each, e.g. parallel CI jobs on one sandbox server.
// Credentials: the operator's LOYALTY_SANDBOX_OPERATOR_TOKEN from the environment when set, else
// the usual ones (a client holding sandbox.create, such as the fixtures' sandbox-ci; for delete
// also the organization's own admin). Secrets are printed, never taken from argv.
import { createLoyaltyClient, isLoyaltyError, type LoyaltyClient } from '@loyalty/sdk';
import { type Context, requireHttpUrl, USER_AGENT } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { onPacingWait } from '../../pacing.js';
import { observedFetch } from '../../request-log.js';
import { sandboxCall } from './sandbox.js';

export const OPERATOR_TOKEN_ENV = 'LOYALTY_SANDBOX_OPERATOR_TOKEN';

const DURATION = /^[1-9]\d{0,8}[smhd]$/;

export interface CreateOptions {
  ttl?: string;
  name?: string;
  env?: boolean;
}

/** A POSIX shell word that is exactly `value`: single quotes, with `'` written as `'\''`. */
export const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/** A client with the operator credential from the environment, or undefined (the context's usual client). */
function operatorClient(ctx: Context): LoyaltyClient | undefined {
  const token = ctx.runtime.env[OPERATOR_TOKEN_ENV];
  if (!token) return undefined;
  requireHttpUrl(ctx.config);
  return createLoyaltyClient({
    baseUrl: ctx.apiUrl,
    token,
    fetch: observedFetch(ctx.runtime, ctx.options.debug ? ctx.output : undefined),
    pacing: { onWait: onPacingWait },
    userAgent: USER_AGENT,
  });
}

const clientOption = (ctx: Context) => {
  const client = operatorClient(ctx);
  return client ? { client } : {};
};

/** A 401 or 403 said in terms of these commands' credentials; anything else as it is. */
async function withCredentialHints<T>(ctx: Context, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const status = error instanceof CliError && isLoyaltyError(error.cause) ? error.cause.status : undefined;
    if (!(error instanceof CliError) || (status !== 401 && status !== 403)) throw error;
    const operator = Boolean(ctx.runtime.env[OPERATOR_TOKEN_ENV]);
    const hint =
      operator && status === 401
        ? `${OPERATOR_TOKEN_ENV} must be the server's operator credential; unset it to use client credentials.`
        : `Use a client holding sandbox.create (the demo fixtures' sandbox-ci) or the server's ${OPERATOR_TOKEN_ENV}; to delete, also the organization's own admin client.`;
    throw new CliError(error.message, { exitCode: error.exitCode, hint, cause: error.cause });
  }
}

export async function createSandboxOrganization(ctx: Context, options: CreateOptions): Promise<void> {
  if (options.env && ctx.output.json) throw usageError(`Pass ${ctx.output.jsonFlag} or --env, not both.`);
  if (options.ttl !== undefined && !DURATION.test(options.ttl))
    throw usageError(`--ttl must be a duration such as 30m, 1h or 2d, at most 7d (got "${options.ttl}").`);
  const body = {
    ...(options.ttl !== undefined ? { ttl: options.ttl } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
  };
  const answer = await withCredentialHints(ctx, () =>
    sandboxCall(
      ctx,
      (api, signal) => api.POST('/sandbox/organizations', { ...(Object.keys(body).length ? { body } : {}), signal }),
      clientOption(ctx),
    ),
  );
  const created = answer.data;
  const { organization: org, clients } = created;
  if (options.env) {
    const lines: [string, string][] = [
      ['LOYALTY_API_URL', ctx.apiUrl],
      ['LOYALTY_ORGANIZATION_ID', org.id],
      ['LOYALTY_BRAND', created.brand_id],
      ['LOYALTY_COUPON_ID', created.coupon_id],
      ['LOYALTY_STORECARD_ID', created.storecard_id],
      ['LOYALTY_CLIENT_ID', clients.admin.client_id],
      ['LOYALTY_CLIENT_SECRET', clients.admin.client_secret],
    ];
    ctx.output.write(lines.map(([name, value]) => `export ${name}=${shellQuote(value)}`).join('\n'));
    ctx.output.info(`Created the sandbox organization ${org.id}; it expires ${org.expires_at}.`);
    return;
  }
  ctx.output.result(created, () =>
    [
      `organization  ${org.id}  ${org.name}`,
      `expires       ${org.expires_at}`,
      `brand         ${created.brand_id}`,
      `coupon        ${created.coupon_id}`,
      `storecard     ${created.storecard_id}`,
      `admin         ${clients.admin.client_id}  secret ${clients.admin.client_secret}`,
      `readonly      ${clients.readonly.client_id}  secret ${clients.readonly.client_secret}`,
    ].join('\n'),
  );
  if (!ctx.output.json) {
    ctx.output.success(`Created the sandbox organization ${org.id} (removed at ${org.expires_at}).`);
    ctx.output.warn(
      'The client secrets are shown only this once: the server keeps only their hashes. ' +
        'In a script use --env (`eval "$(loyalty sandbox create --env)"`) or --json.',
    );
  }
}

export async function deleteSandboxOrganization(ctx: Context, id: string): Promise<void> {
  await withCredentialHints(ctx, () =>
    sandboxCall(ctx, (api, signal) => api.DELETE('/sandbox/organizations/{id}', { params: { path: { id } }, signal }), {
      ...clientOption(ctx),
      // The server answers "Organization not found." for an id it will not delete; a server not in
      // sandbox mode has no such route at all.
      notFound: (error) =>
        /organization/i.test(error.message)
          ? new CliError(`No throwaway sandbox organization ${id} that these credentials may delete.`, {
              hint: 'It is gone already (deleted, or removed after its ttl), or another client created it; fixture organizations are never deleted.',
            })
          : undefined,
    }),
  );
  ctx.output.success(`Deleted the sandbox organization ${id} and all its data.`);
  if (ctx.output.json) ctx.output.result({ deleted: id }, () => '');
}
