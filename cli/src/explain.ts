// Turns anything thrown into what the user reads: one line, what to do next, an exit code.
// API errors (the SDK's LoyaltyError values) are explained by status and error code.
import type { LoyaltyError } from '@loyalty/sdk';
import { hasErrorCode } from './error-codes.js';
import { CliError, ExitCode } from './errors.js';
import { requestIdSuffix } from './request-log.js';
import type { SettingSource } from './settings.js';

export interface Explained {
  message: string;
  hint?: string | undefined;
  exitCode: ExitCode;
  cause?: unknown;
}

/** Context an API error is explained in (which server, which profile). */
export interface ApiErrorContext {
  apiUrl?: string;
  profile?: string;
  /** The brand the command sent and where it came from, to name it when the API does not know it. */
  brand?: { value: string; source: SettingSource };
}

const BRAND_SOURCES: Record<SettingSource, string> = {
  flag: '--brand',
  env: 'LOYALTY_BRAND',
  profile: 'the profile (`loyalty config set brand <id>`)',
  default: 'the default',
};

/**
 * The one message for a brand the API does not know (or that belongs to another organization),
 * whichever command sent it; exit 1.
 */
export function unknownBrand(brand: { value: string; source: SettingSource }, cause?: unknown): Explained {
  return {
    cause,
    message: `Brand "${brand.value}" not found.`,
    hint: `It came from ${BRAND_SOURCES[brand.source]}. Check the brand id; brands of other organizations are not visible to this login.`,
    exitCode: ExitCode.error,
  };
}

/** Recognised by shape, so the SDK is not loaded for commands that never call the API. */
export function isApiError(error: unknown): error is LoyaltyError {
  return error instanceof Error && error.name === 'LoyaltyError' && typeof (error as LoyaltyError).status === 'number';
}

export function explainError(error: unknown, signal?: AbortSignal): Explained | undefined {
  if (signal?.aborted && !(error instanceof CliError && error.exitCode !== ExitCode.interrupted)) {
    const interrupted = error instanceof CliError ? error : undefined;
    return {
      message: interrupted?.message ?? 'Interrupted.',
      hint: interrupted?.hint,
      exitCode: ExitCode.interrupted,
      cause: error,
    };
  }
  if (error instanceof CliError)
    return { message: error.message, hint: error.hint, exitCode: error.exitCode, cause: error.cause };
  if (isApiError(error)) return explainApiError(error);
  return undefined;
}

/** The fields' messages, leaving out those that only repeat the error's own message. */
function fieldSummary(fields: Record<string, string[]> | undefined, message: string): string {
  if (!fields) return '';
  const entries = Object.entries(fields)
    .map(([field, messages]): [string, string[]] => [field, messages.filter((m) => m !== message)])
    .filter(([, messages]) => messages.length > 0);
  const shown = entries.slice(0, 3).map(([field, messages]) => `${field}: ${messages.join(' ')}`);
  return shown.length ? ` (${shown.join('; ')}${entries.length > 3 ? `; and ${entries.length - 3} more` : ''})` : '';
}

/** What went wrong with an API call, its message ending with ` (request id: …)` when the id is known. */
export function explainApiError(error: LoyaltyError, context: ApiErrorContext = {}): Explained {
  const explained = explainApiFailure(error, context);
  const id = typeof error.requestId === 'string' ? error.requestId : undefined;
  return id ? { ...explained, message: `${explained.message}${requestIdSuffix(id)}` } : explained;
}

function explainApiFailure(error: LoyaltyError, context: ApiErrorContext): Explained {
  const where = context.apiUrl ? ` at ${context.apiUrl}` : '';
  const login = `loyalty login${context.profile && context.profile !== 'default' ? ` --profile ${context.profile}` : ''}`;
  const base = { cause: error };
  if (hasErrorCode(error, 'network_error')) {
    const cause = error.cause instanceof Error ? error.cause : undefined;
    const code =
      (cause?.cause as NodeJS.ErrnoException | undefined)?.code ?? (cause as NodeJS.ErrnoException | undefined)?.code;
    return {
      ...base,
      message: `Cannot reach the API${where}${code ? ` (${code})` : ''}.`,
      hint: 'Is the server running? Start one with `loyalty server`, or point --api-url or LOYALTY_API_URL at it.',
      exitCode: ExitCode.error,
    };
  }
  if (hasErrorCode(error, 'timeout')) {
    return {
      ...base,
      message: `The API${where} did not answer in time.`,
      hint: 'Try again; if it keeps happening, check the server.',
      exitCode: ExitCode.error,
    };
  }
  if (hasErrorCode(error, 'invalid_client')) {
    return {
      ...base,
      message: 'The API refused the client credentials (invalid_client).',
      hint: `Check them with \`loyalty config list\`, then run \`${login}\`.`,
      exitCode: ExitCode.auth,
    };
  }
  if (hasErrorCode(error, 'invalid_scope')) {
    return {
      ...base,
      message: 'The client may not request those abilities (invalid_scope).',
      hint: 'Log in with a client that has them.',
      exitCode: ExitCode.auth,
    };
  }
  switch (error.status) {
    case 401:
      return {
        ...base,
        message: `The API refused the credentials (401 ${error.code}).`,
        hint: `Tokens last an hour: run \`${login}\` again, or log in with client credentials so tokens are renewed.`,
        exitCode: ExitCode.auth,
      };
    case 403:
      return {
        ...base,
        message: `Permission denied: ${error.message}`,
        hint: 'The token lacks the ability this needs (see `loyalty config list`); use a client that has it.',
        exitCode: ExitCode.auth,
      };
    case 404:
      if (context.brand && /^brand not found\b/i.test(error.message)) return unknownBrand(context.brand, error);
      return {
        ...base,
        message: `${error.message.replace(/\.$/, '')} (404).`,
        hint: 'Check the id and --brand; objects of other organizations are not visible.',
        exitCode: ExitCode.error,
      };
    case 422:
      return {
        ...base,
        message: `The API rejected the request: ${error.message}${fieldSummary(error.fields, error.message)}`,
        exitCode: ExitCode.error,
      };
    case 429:
      return {
        ...base,
        message: 'The API kept answering 429 Too Many Requests.',
        hint: 'Wait a minute and run the command again.',
        exitCode: ExitCode.error,
      };
    default:
      if (error.status >= 500) {
        return {
          ...base,
          message: `The API failed (${error.status}): ${error.message}`,
          hint: 'Try again; if it keeps failing, look at the server log.',
          exitCode: ExitCode.error,
        };
      }
      return {
        ...base,
        message: `The API answered ${error.status} ${error.code}: ${error.message}`,
        exitCode: ExitCode.error,
      };
  }
}
