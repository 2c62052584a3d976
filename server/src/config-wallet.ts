import Joi from 'joi';

/**
 * Wallet passes' configuration (config.ts's `wallet`). Every credential is given as its text
 * (PEM, JSON) or as the path of a file holding it: never on a command line, never logged.
 * Unset, the sandbox's own keys are generated once into the data directory (services/wallet/).
 */
export type WalletConfig = {
  /** The operator's Apple pass signing; all five or none (then the sandbox's test CA signs). */
  apple:
    | {
        /** Pass Type ID certificate, PEM text or a path. */
        cert: string;
        /** Its private key, PEM text or a path. */
        key: string;
        keyPassphrase: string | undefined;
        /** Apple's WWDR intermediate certificate, PEM text or a path. */
        wwdr: string;
        teamId: string;
        passTypeId: string;
      }
    | undefined;
  /** APNs' base URL for pass update pushes (with real Apple credentials only); tests point it at a local HTTP/2 endpoint. */
  apnsUrl: string;
  /** The operator's Google Wallet issuer; both or none (then the sandbox's generated key signs, and its save page shows the pass). */
  google:
    | {
        issuerId: string;
        /** The service account's JSON key, its text or a path. */
        serviceAccount: string;
      }
    | undefined;
};

const APPLE = [
  'LOYALTY_APPLE_PASS_CERT',
  'LOYALTY_APPLE_PASS_KEY',
  'LOYALTY_APPLE_WWDR',
  'LOYALTY_APPLE_TEAM_ID',
  'LOYALTY_APPLE_PASS_TYPE_ID',
] as const;
const GOOGLE = ['LOYALTY_GOOGLE_WALLET_ISSUER_ID', 'LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT'] as const;

/** Joi keys of config.ts's schema. */
export const walletEnvSchema = {
  LOYALTY_APPLE_PASS_CERT: Joi.string().empty(''),
  LOYALTY_APPLE_PASS_KEY: Joi.string().empty(''),
  LOYALTY_APPLE_PASS_KEY_PASSPHRASE: Joi.string().empty(''),
  LOYALTY_APPLE_WWDR: Joi.string().empty(''),
  LOYALTY_APPLE_TEAM_ID: Joi.string()
    .empty('')
    .pattern(/^[A-Z0-9]{10}$/)
    .messages({ 'string.pattern.base': 'LOYALTY_APPLE_TEAM_ID must be 10 capital letters or digits' }),
  LOYALTY_APPLE_PASS_TYPE_ID: Joi.string()
    .empty('')
    .pattern(/^pass\.[A-Za-z0-9.-]+$/)
    .messages({ 'string.pattern.base': 'LOYALTY_APPLE_PASS_TYPE_ID must look like pass.com.example.loyalty' }),
  LOYALTY_APPLE_APNS_URL: Joi.string()
    .uri({ scheme: ['https', 'http'] })
    .empty('')
    .default('https://api.push.apple.com'),
  LOYALTY_GOOGLE_WALLET_ISSUER_ID: Joi.string()
    .empty('')
    .pattern(/^\d+$/)
    .messages({ 'string.pattern.base': "LOYALTY_GOOGLE_WALLET_ISSUER_ID must be the issuer's number" }),
  LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT: Joi.string().empty(''),
};

/** The variables of a group that are missing when some of it is set: config.ts reports them as one error. */
export function walletConfigProblems(value: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const group of [APPLE, GOOGLE]) {
    const missing = group.filter((name) => value[name] === undefined);
    if (missing.length && missing.length < group.length)
      problems.push(`${missing.join(', ')} must be set too (${group.join(', ')} go together)`);
  }
  return problems;
}

export function walletConfigOf(value: Record<string, string | undefined>): WalletConfig {
  const s = (name: string) => value[name] as string;
  return {
    apple: value.LOYALTY_APPLE_PASS_CERT
      ? {
          cert: s('LOYALTY_APPLE_PASS_CERT'),
          key: s('LOYALTY_APPLE_PASS_KEY'),
          keyPassphrase: value.LOYALTY_APPLE_PASS_KEY_PASSPHRASE,
          wwdr: s('LOYALTY_APPLE_WWDR'),
          teamId: s('LOYALTY_APPLE_TEAM_ID'),
          passTypeId: s('LOYALTY_APPLE_PASS_TYPE_ID'),
        }
      : undefined,
    apnsUrl: s('LOYALTY_APPLE_APNS_URL').replace(/\/+$/, ''),
    google: value.LOYALTY_GOOGLE_WALLET_ISSUER_ID
      ? { issuerId: s('LOYALTY_GOOGLE_WALLET_ISSUER_ID'), serviceAccount: s('LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT') }
      : undefined,
  };
}
