// What a command's action gets: resolved settings, output, the API client and Ctrl-C signal.
import type { Command } from 'commander';
import { onPacingWait } from './pacing.js';
import { noteRetry, onApiRetry } from './api-retries.js';
import { liveView } from './ui/live.js';
import type { LoyaltyClient, LoyaltyClientOptions, RetryOptions } from '@loyalty/sdk';
import { loadConfig, type ResolvedConfig, type SettingSource } from './settings.js';
import { usageError } from './errors.js';
import { hasCredentials, notLoggedIn } from './not-logged-in.js';
import { Output } from './output.js';
import { readSecretFile } from './secrets.js';
import { commandLineOf, runtimeOf, type Runtime } from './runtime.js';
import { observedFetch, type FetchLike } from './request-log.js';
import { cachingTokenFetch, tokenCacheKey } from './token-cache.js';
import { CLI_VERSION } from './version.js';

export interface GlobalOptions {
  profile?: string;
  apiUrl?: string;
  brand?: string;
  tokenFile?: string;
  json?: boolean;
  jq?: string;
  debug?: boolean;
  color?: boolean;
}

export interface Context {
  runtime: Runtime;
  output: Output;
  config: ResolvedConfig;
  options: GlobalOptions;
  signal: AbortSignal;
  apiUrl: string;
  /** The words of this run as typed after `loyalty` (a "Continue with" hint repeats them). */
  commandLine: readonly string[];
  /** The brand for brand-scoped calls: --brand, LOYALTY_BRAND or the profile's brand. */
  brand(): string;
  /**
   * The SDK client, authenticated with the highest-precedence credentials. With options, a
   * separate client (e.g. no retries for a long poll that reports its own reconnects).
   */
  client(options?: ClientTuning): LoyaltyClient;
}

export interface ClientTuning {
  retry?: RetryOptions | false;
  timeoutMs?: number;
}

const rank: Record<SettingSource, number> = { flag: 3, env: 2, profile: 1, default: 0 };

export const USER_AGENT = `loyalty-cli/${CLI_VERSION}`;

export async function contextOf(command: Command): Promise<Context> {
  const runtime = runtimeOf(command);
  // Loaded here, not at start-up: `loyalty --help` needs no API code.
  const { createLoyaltyClient } = await import('@loyalty/sdk');
  const options = command.optsWithGlobals<GlobalOptions>();
  const token = options.tokenFile ? await readSecretFile(options.tokenFile, runtime, '--token-file') : undefined;
  const config = await loadConfig({
    env: runtime.env,
    flags: {
      ...(options.profile ? { profile: options.profile } : {}),
      ...(options.apiUrl ? { api_url: options.apiUrl } : {}),
      ...(options.brand ? { brand: options.brand } : {}),
      ...(token ? { token } : {}),
    },
  });
  // Loaded only with --jq (jq.ts); a mistake in the expression stops the run before any request.
  const jq = options.jq === undefined ? undefined : await (await import('./jq.js')).loadJqFilter(options.jq);
  const output = new Output({
    stdout: runtime.stdout,
    stderr: runtime.stderr,
    env: runtime.env,
    json: Boolean(options.json),
    jq,
    ...(options.color === false ? { color: false } : {}),
  });
  const apiUrl = config.settings.api_url.value.replace(/\/+$/, '');
  let client: LoyaltyClient | undefined;
  // Whether the API has answered any call of this run: a refused connection before that is a
  // server that is not running, and fails at once (api-retries.ts).
  let answered = false;
  const onRetry = onApiRetry({
    apiUrl,
    answered: () => answered,
    say: (line, delayMs) => (liveView.active ? noteRetry(line, delayMs) : output.warn(line)),
  });
  const withRetries = (tuning: ClientTuning): ClientTuning =>
    tuning.retry === false ? tuning : { ...tuning, retry: { ...tuning.retry, onRetry } };
  return {
    runtime,
    output,
    config,
    options,
    signal: runtime.signal,
    apiUrl,
    commandLine: commandLineOf(command),
    brand() {
      const brand = config.settings.brand?.value;
      if (!brand) {
        // Logging in saves a brand too: that comes first.
        if (!hasCredentials(config)) throw notLoggedIn(config);
        throw usageError(
          'No brand given.',
          'Pass --brand <id>, set LOYALTY_BRAND, or save one with `loyalty config set brand <id>`.',
        );
      }
      return brand;
    },
    client(tuning) {
      requireHttpUrl(config);
      const observed = observedFetch(runtime, options.debug ? output : undefined);
      const fetch: FetchLike = async (request) => {
        const response = await observed(request);
        answered = true;
        return response;
      };
      if (tuning) return createClient(createLoyaltyClient, config, apiUrl, withRetries(tuning), fetch);
      client ??= createClient(createLoyaltyClient, config, apiUrl, withRetries({}), fetch);
      return client;
    },
  };
}

const SOURCE_NAMES: Record<SettingSource, string> = {
  flag: '--api-url',
  env: 'LOYALTY_API_URL',
  profile: 'the profile',
  default: 'the default',
};

/**
 * Checked when the API is about to be called, not when settings load, so that `loyalty config`
 * still runs to fix a bad value.
 */
export function requireHttpUrl(config: ResolvedConfig): void {
  const setting = config.settings.api_url;
  // URL() forgives surrounding spaces; the SDK, which gets the raw value, would not.
  const url =
    setting.value === setting.value.trim() && URL.canParse(setting.value) ? new URL(setting.value) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw usageError(
      `The API URL ${JSON.stringify(setting.value)} (from ${SOURCE_NAMES[setting.source]}) is not an http(s) URL.`,
      'For example: --api-url http://127.0.0.1:3000',
    );
  }
}

function createClient(
  createLoyaltyClient: (options: LoyaltyClientOptions) => LoyaltyClient,
  config: ResolvedConfig,
  baseUrl: string,
  tuning: ClientTuning,
  /** Every HTTP request goes through it (request ids, --debug lines). */
  observed: FetchLike,
): LoyaltyClient {
  const { token, client_id: clientId, client_secret: clientSecret } = config.settings;
  const credentialsRank = clientId && clientSecret ? Math.min(rank[clientId.source], rank[clientSecret.source]) : -1;
  const tokenRank = token ? rank[token.source] : -1;
  // Client credentials win a tie: the SDK refreshes their tokens, a fixed token just expires.
  if (clientId && clientSecret && credentialsRank >= tokenRank) {
    // Observed inside the cache: only requests that reach the API are shown and noted.
    const fetch = cachingTokenFetch({
      configDir: config.configDir,
      key: tokenCacheKey(baseUrl, clientId.value, clientSecret.value),
      fetch: observed,
    });
    return createLoyaltyClient({
      ...tuning,
      pacing: { onWait: onPacingWait },
      baseUrl,
      fetch,
      clientCredentials: { clientId: clientId.value, clientSecret: clientSecret.value },
      userAgent: USER_AGENT,
    });
  }
  if (token)
    return createLoyaltyClient({
      ...tuning,
      pacing: { onWait: onPacingWait },
      baseUrl,
      fetch: observed,
      token: token.value,
      userAgent: USER_AGENT,
    });
  throw notLoggedIn(config);
}
