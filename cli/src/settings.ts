// Settings come from flags, then the environment, then the profile file, then defaults.
// Every resolved value remembers where it came from so `loyalty config list` can say so.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { CliError, usageError } from './errors.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';
export const DEFAULT_PROFILE = 'default';

export const SETTING_KEYS = ['api_url', 'brand', 'client_id', 'client_secret', 'token'] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];
export type SettingSource = 'flag' | 'env' | 'profile' | 'default';

export const SECRET_KEYS: ReadonlySet<SettingKey> = new Set(['client_secret', 'token']);

export const ENV_NAMES: Record<SettingKey, string> = {
  api_url: 'LOYALTY_API_URL',
  brand: 'LOYALTY_BRAND',
  client_id: 'LOYALTY_CLIENT_ID',
  client_secret: 'LOYALTY_CLIENT_SECRET',
  token: 'LOYALTY_TOKEN',
};

export interface Setting {
  value: string;
  source: SettingSource;
}

/** What a profile stores. `listen_secret` is the local signing secret of `webhooks listen`. */
export interface Profile extends Partial<Record<SettingKey, string>> {
  listen_secret?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export interface ResolvedConfig {
  configDir: string;
  configPath: string;
  profile: { name: string; source: SettingSource };
  /** The profiles the config file holds, in its order. */
  profiles: string[];
  /** The API URL always has one (its default); the others may be unset. */
  settings: Partial<Record<SettingKey, Setting>> & { api_url: Setting };
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says relative paths are invalid and must be ignored.
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'loyalty');
}

export async function readConfigFile(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch {
    throw new CliError(`The config file ${path} is not valid JSON.`, {
      hint: 'Fix or delete it, then run `loyalty login` again.',
    });
  }
}

/** Writes a file only its owner can read, atomically (temp file + rename). */
export async function writePrivateFile(dir: string, path: string, content: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Random, not the time: two writes of one process in the same millisecond had one temp file.
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, content, { mode: 0o600 });
  await chmod(temp, 0o600); // the umask may have narrowed the mode above; never widened
  await rename(temp, path);
}

export async function writeConfigFile(dir: string, file: ConfigFile): Promise<void> {
  await writePrivateFile(dir, join(dir, 'config.json'), `${JSON.stringify(file, null, 2)}\n`);
}

export interface ResolveInput {
  flags?: Partial<Record<SettingKey, string>> & { profile?: string };
  env?: NodeJS.ProcessEnv;
  file?: ConfigFile;
}

export function resolveConfig({ flags = {}, env = process.env, file }: ResolveInput): ResolvedConfig {
  const dir = configDir(env);
  const profile: ResolvedConfig['profile'] = flags.profile
    ? { name: flags.profile, source: 'flag' }
    : env.LOYALTY_PROFILE
      ? { name: env.LOYALTY_PROFILE, source: 'env' }
      : { name: DEFAULT_PROFILE, source: 'default' };
  const stored = file?.profiles[profile.name] ?? {};
  const settings: Partial<Record<SettingKey, Setting>> = {};
  for (const key of SETTING_KEYS) {
    const fromFlag = flags[key];
    const fromEnv = env[ENV_NAMES[key]];
    const fromProfile = stored[key];
    if (fromFlag) settings[key] = { value: fromFlag, source: 'flag' };
    else if (fromEnv) settings[key] = { value: fromEnv, source: 'env' };
    else if (fromProfile) settings[key] = { value: fromProfile, source: 'profile' };
  }
  return {
    configDir: dir,
    configPath: join(dir, 'config.json'),
    profile,
    profiles: Object.keys(file?.profiles ?? {}),
    settings: { ...settings, api_url: settings.api_url ?? { value: DEFAULT_API_URL, source: 'default' } },
  };
}

export async function loadConfig(input: Omit<ResolveInput, 'file'>): Promise<ResolvedConfig> {
  const env = input.env ?? process.env;
  const file = await readConfigFile(join(configDir(env), 'config.json'));
  return resolveConfig({ ...input, env, file });
}

export function maskSecret(value: string): string {
  if (value.length <= 12) return '********';
  return `${value.slice(0, 4)}… (${value.length} chars)`;
}

export function isSettingKey(key: string): key is SettingKey {
  return (SETTING_KEYS as readonly string[]).includes(key);
}

export function assertSettingKey(key: string): SettingKey {
  const normalized = key.replace(/-/g, '_');
  if (!isSettingKey(normalized)) {
    throw usageError(`Unknown setting "${key}".`, `Settings: ${SETTING_KEYS.join(', ')}.`);
  }
  return normalized;
}

/** Updates one profile in the file, creating file and directory with private modes. */
export async function updateProfile(
  env: NodeJS.ProcessEnv,
  name: string,
  change: (profile: Profile) => Profile,
): Promise<string> {
  const dir = configDir(env);
  const path = join(dir, 'config.json');
  const file = await readConfigFile(path);
  file.profiles[name] = change({ ...(file.profiles[name] ?? {}) });
  await writeConfigFile(dir, file);
  return path;
}

export async function readProfile(env: NodeJS.ProcessEnv, name: string): Promise<Profile> {
  const file = await readConfigFile(join(configDir(env), 'config.json'));
  return file.profiles[name] ?? {};
}
