// What a command says when it has no credentials: "Not logged in", or, when the profile named by
// --profile or LOYALTY_PROFILE is not in the config file, which profiles there are (and the one
// a typo most likely meant). Checked before anything else a command needs, such as a brand.
import { closest, distance } from 'fastest-levenshtein';
import { CliError, ExitCode, usageError } from './errors.js';
import type { ResolvedConfig } from './settings.js';

export function hasCredentials(config: ResolvedConfig): boolean {
  const { token, client_id: clientId, client_secret: clientSecret } = config.settings;
  return Boolean(token || (clientId && clientSecret));
}

/** The profile a mistyped name most likely meant: within a third of its length in edits. */
export function closestProfile(name: string, profiles: readonly string[]): string | undefined {
  if (profiles.length === 0) return undefined;
  const best = closest(name, [...profiles]);
  return distance(name, best) <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

export function notLoggedIn(config: ResolvedConfig): CliError {
  const { name, source } = config.profile;
  if (source !== 'default' && !config.profiles.includes(name)) {
    const flag = source === 'flag' ? '--profile' : 'LOYALTY_PROFILE';
    const guess = closestProfile(name, config.profiles);
    const known = config.profiles.length
      ? `Profiles: ${config.profiles.join(', ')}.${guess ? ` Did you mean "${guess}"?` : ''}`
      : 'There are no profiles yet.';
    return usageError(
      `No profile "${name}" (from ${flag}) in ${config.configPath}.`,
      `${known} To create "${name}", run \`loyalty login --profile ${name}\`.`,
    );
  }
  const profile = name === 'default' ? '' : ` --profile ${name}`;
  return new CliError(`Not logged in${profile ? ` (profile ${name})` : ''}.`, {
    exitCode: ExitCode.auth,
    hint: `Run \`loyalty login${profile}\`, or set LOYALTY_TOKEN, or LOYALTY_CLIENT_ID and LOYALTY_CLIENT_SECRET.`,
  });
}
