// `loyalty config`: show where each setting comes from, read one, change the profile file.
import type { Context } from '../../context.js';
import {
  assertSettingKey,
  ENV_NAMES,
  maskSecret,
  SECRET_KEYS,
  SETTING_KEYS,
  updateProfile,
  type SettingKey,
} from '../../settings.js';
import { CliError, usageError } from '../../errors.js';

export function listConfig(ctx: Context): void {
  const { config } = ctx;
  const rows = SETTING_KEYS.map((key) => {
    const setting = config.settings[key];
    const value = setting ? (SECRET_KEYS.has(key) ? maskSecret(setting.value) : setting.value) : null;
    return { key, value, source: setting?.source ?? null, env: ENV_NAMES[key] };
  });
  if (ctx.output.json) {
    ctx.output.result({ config_file: config.configPath, profile: config.profile, settings: rows }, () => '');
    return;
  }
  ctx.output.info(
    ctx.output.err.dim(`Profile "${config.profile.name}" (from ${config.profile.source}); file ${config.configPath}`),
  );
  ctx.output.table(rows, [
    { header: 'setting', value: (row) => row.key },
    { header: 'value', value: (row) => row.value ?? '(not set)' },
    { header: 'from', value: (row) => row.source ?? '' },
  ]);
}

export function getConfig(ctx: Context, name: string, reveal: boolean): void {
  const key = assertSettingKey(name);
  const setting = ctx.config.settings[key];
  if (!setting) {
    throw new CliError(`${key} is not set in profile "${ctx.config.profile.name}".`, {
      hint: `Set it with \`loyalty config set ${key} <value>\` or ${ENV_NAMES[key]}.`,
    });
  }
  const value = SECRET_KEYS.has(key) && !reveal ? maskSecret(setting.value) : setting.value;
  ctx.output.result({ key, value, source: setting.source }, () => value);
}

const SETTABLE: ReadonlySet<SettingKey> = new Set(['api_url', 'brand', 'client_id']);

export async function setConfig(ctx: Context, name: string, value: string | undefined): Promise<void> {
  const key = assertSettingKey(name);
  if (!SETTABLE.has(key)) {
    throw usageError(
      `${key} is a secret and is not set on the command line.`,
      key === 'token'
        ? 'Use `loyalty login --token-file <file>` (or - for stdin).'
        : 'Use `loyalty login --client-id <id> --client-secret-stdin`.',
    );
  }
  if (key === 'api_url' && value !== undefined && !/^https?:\/\/[^\s/]+/.test(value)) {
    throw usageError(
      `"${value}" is not an http(s) URL.`,
      'For example: loyalty config set api_url http://127.0.0.1:3000',
    );
  }
  const profile = ctx.config.profile.name;
  const path = await updateProfile(ctx.runtime.env, profile, (stored) => {
    if (value === undefined) delete stored[key];
    else stored[key] = value;
    return stored;
  });
  const envName = ENV_NAMES[key];
  ctx.output.success(
    value === undefined
      ? `Removed ${key} from profile "${profile}" (${path}).`
      : `Set ${key} in profile "${profile}" (${path}).`,
  );
  if (ctx.runtime.env[envName])
    ctx.output.warn(`${envName} is set in the environment and takes precedence over the profile.`);
}
