// `loyalty login`: store client credentials (or a token) in a profile, after checking them, with
// the API URL they were checked against and a brand (asked for on a terminal).
import { createLoyaltyClient, type LoyaltyClient, type LoyaltyError, toLoyaltyError } from '@loyalty/sdk';
import { requireHttpUrl, USER_AGENT, type Context } from '../../context.js';
import { CliError, ExitCode } from '../../errors.js';
import { hasErrorCode } from '../../error-codes.js';
import { updateProfile } from '../../settings.js';
import { prompt, readSecretStdin } from '../../secrets.js';
import { observedFetch } from '../../request-log.js';
import { apiFailure, request } from '../common/api.js';
import { brandKnown } from '../common/brand.js';

export interface LoginOptions {
  clientId?: string;
  clientSecretStdin?: boolean;
  verify: boolean;
}

type Stored = { token: string } | { client_id: string; client_secret: string };

/** The API refused what was just typed: say so, rather than "run `loyalty login`" (just run). */
function refused(ctx: Context, stored: Stored, error: LoyaltyError): CliError {
  const id = typeof error.requestId === 'string' ? ` (request id: ${error.requestId})` : '';
  if ('token' in stored)
    return new CliError(
      `The API at ${ctx.apiUrl} refused the token (${error.status} ${error.code}); nothing was saved.${id}`,
      {
        exitCode: ExitCode.auth,
        hint: 'Tokens last an hour: get a new one, or log in with a client id and secret, whose tokens are renewed.',
      },
    );
  return new CliError(
    `The API at ${ctx.apiUrl} refused the secret of client "${stored.client_id}" (${error.code}); nothing was saved.${id}`,
    {
      exitCode: ExitCode.auth,
      hint: 'Check the client id and its secret (and --api-url: another server has other clients), then try again.',
    },
  );
}

/** The brands the client's tags belong to, to offer at the prompt. */
function brandsOf(body: unknown): string[] {
  const data = (body as { data?: unknown } | undefined)?.data;
  const tags = Array.isArray(data) ? (data as Array<{ brand_id?: unknown }>) : [];
  return [...new Set(tags.map((tag) => tag.brand_id).filter((b): b is string => typeof b === 'string'))].sort();
}

/**
 * On a terminal, when no brand was given: asks for one, offering the brands the client's tags
 * belong to, and checks it (when verifying): an unknown brand is not saved. Enter keeps none.
 */
async function askBrand(ctx: Context, known: string[], client: LoyaltyClient | undefined): Promise<string | undefined> {
  const { runtime, output } = ctx;
  if (!runtime.stdin.isTTY || !runtime.stderr.isTTY || output.json) return undefined;
  if (known.length) output.info(`Brands with tags for this client: ${known.join(', ')}`);
  const fallback = known.length === 1 ? known[0] : undefined;
  const answer = await prompt(
    runtime,
    fallback ? `Brand (Enter for ${fallback}, "-" for none): ` : 'Brand (Enter for none): ',
    { flag: '--brand <id>', optional: true },
  );
  const brand = answer === '' ? fallback : answer === '-' ? undefined : answer;
  if (!brand || !client || (await brandKnown(ctx, brand, client)) !== false) return brand;
  output.warn(`Brand "${brand}" not found, so not saved; brands of other organizations are not visible to this login.`);
  return undefined;
}

export async function login(ctx: Context, options: LoginOptions): Promise<void> {
  const { config, runtime } = ctx;
  const profile = config.profile.name;
  const tokenFromFlag = config.settings.token?.source === 'flag' ? config.settings.token.value : undefined;

  let stored: Stored;
  if (tokenFromFlag) {
    stored = { token: tokenFromFlag };
  } else {
    const clientId =
      options.clientId ??
      runtime.env.LOYALTY_CLIENT_ID ??
      (await prompt(runtime, 'Client ID: ', { flag: '--client-id <id>' }));
    const clientSecret = options.clientSecretStdin
      ? await readSecretStdin(runtime, '--client-secret-stdin')
      : (runtime.env.LOYALTY_CLIENT_SECRET ??
        (await prompt(runtime, 'Client secret: ', { secret: true, flag: '--client-secret-stdin (or --token-file)' })));
    stored = { client_id: clientId, client_secret: clientSecret };
  }

  let client: LoyaltyClient | undefined;
  let brands: string[] = [];
  if (options.verify) {
    requireHttpUrl(ctx.config);
    client = createLoyaltyClient({
      baseUrl: ctx.apiUrl,
      userAgent: USER_AGENT,
      fetch: observedFetch(runtime, ctx.options.debug ? ctx.output : undefined),
      retry: { maxAttempts: 2 },
      ...('token' in stored
        ? { token: stored.token }
        : { clientCredentials: { clientId: stored.client_id, clientSecret: stored.client_secret } }),
    });
    const result = await request(ctx, (api, signal) => api.GET('/tags', { signal }), { client });
    const error = toLoyaltyError(result);
    if (error && (error.status === 401 || hasErrorCode(error, 'invalid_client'))) throw refused(ctx, stored, error);
    // 403 means the credentials are good but may not list tags (a device, a narrow client).
    if (error && error.status !== 403) throw apiFailure(ctx, error);
    brands = brandsOf(result.data);
  }

  // The URL the credentials belong to, and the brand, from a flag or the environment: a profile
  // with credentials for one server and the URL of another would not work.
  const { api_url: apiUrl, brand } = config.settings;
  const givenApiUrl = apiUrl.source === 'flag' || apiUrl.source === 'env' ? apiUrl.value : undefined;
  const givenBrand =
    brand && (brand.source === 'flag' || brand.source === 'env') ? brand.value : await askBrand(ctx, brands, client);
  const path = await updateProfile(runtime.env, profile, (current) => {
    const next = { ...current };
    delete next.token;
    delete next.client_id;
    delete next.client_secret;
    Object.assign(next, stored);
    if (givenApiUrl) next.api_url = givenApiUrl;
    if (givenBrand) next.brand = givenBrand;
    return next;
  });
  const who = 'token' in stored ? 'a token' : `client ${stored.client_id}`;
  ctx.output.success(
    `${options.verify ? 'Logged in' : 'Saved credentials'} to ${ctx.apiUrl} with ${who} (profile "${profile}", ${path}).`,
  );
  const savedBrand = givenBrand ?? (brand?.source === 'profile' ? brand.value : undefined);
  if (!savedBrand && !ctx.output.json)
    ctx.output.info(
      `  No brand saved: pass --brand <id> to brand-scoped commands, or save one with \`loyalty config set brand <id>${profile === 'default' ? '' : ` --profile ${profile}`}\`.`,
    );
  if (ctx.output.json) {
    ctx.output.result(
      {
        profile,
        api_url: ctx.apiUrl,
        brand: savedBrand ?? null,
        auth: 'token' in stored ? 'token' : 'client_credentials',
        config_file: path,
        verified: options.verify,
      },
      () => '',
    );
  }
}
