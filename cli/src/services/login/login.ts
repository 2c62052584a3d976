// `loyalty login`: store client credentials (or a token) in a profile, after checking them.
import { createLoyaltyClient, toLoyaltyError } from '@loyalty/sdk';
import { requireHttpUrl, USER_AGENT, type Context } from '../../context.js';
import { updateProfile } from '../../settings.js';
import { prompt, readSecretStdin } from '../../secrets.js';
import { observedFetch } from '../../request-log.js';
import { apiFailure, request } from '../common/api.js';

export interface LoginOptions {
  clientId?: string;
  clientSecretStdin?: boolean;
  verify: boolean;
}

export async function login(ctx: Context, options: LoginOptions): Promise<void> {
  const { config, runtime } = ctx;
  const profile = config.profile.name;
  const tokenFromFlag = config.settings.token?.source === 'flag' ? config.settings.token.value : undefined;

  let stored: { token: string } | { client_id: string; client_secret: string };
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

  if (options.verify) {
    requireHttpUrl(ctx.config);
    const client = createLoyaltyClient({
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
    // 403 means the credentials are good but may not list tags (a device, a narrow client).
    if (error && error.status !== 403) throw apiFailure(ctx, error);
  }

  const explicitApiUrl = config.settings.api_url?.source === 'flag' ? config.settings.api_url.value : undefined;
  const explicitBrand = config.settings.brand?.source === 'flag' ? config.settings.brand.value : undefined;
  const path = await updateProfile(runtime.env, profile, (current) => {
    const next = { ...current };
    delete next.token;
    delete next.client_id;
    delete next.client_secret;
    Object.assign(next, stored);
    if (explicitApiUrl) next.api_url = explicitApiUrl;
    if (explicitBrand) next.brand = explicitBrand;
    return next;
  });
  const who = 'token' in stored ? 'a token' : `client ${stored.client_id}`;
  ctx.output.success(
    `${options.verify ? 'Logged in' : 'Saved credentials'} to ${ctx.apiUrl} with ${who} (profile "${profile}", ${path}).`,
  );
  if (ctx.output.json) {
    ctx.output.result(
      {
        profile,
        api_url: ctx.apiUrl,
        auth: 'token' in stored ? 'token' : 'client_credentials',
        config_file: path,
        verified: options.verify,
      },
      () => '',
    );
  }
}
