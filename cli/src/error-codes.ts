// The error codes the CLI reacts to, typed from openapi.yaml where the document lists them, so
// a code the document does not have (or a typo) does not compile. Types only: no API code loads.
import type { components, LoyaltyError } from '@loyalty/sdk';

type Schemas = components['schemas'];

/** The `error` codes of the document's error bodies: the generic Error's, OAuth (RFC 6749), idempotency and validation. */
export type DocumentedErrorCode =
  | Schemas['ErrorCode']
  | Schemas['OAuthError']['error']
  | Schemas['IdempotencyError']['error']
  | Schemas['ValidationError']['error'];

/** The SDK's codes for a call that got no response (not API codes, so not in the document). */
export type NoResponseCode = 'network_error' | 'timeout';

export const hasErrorCode = (error: Pick<LoyaltyError, 'code'>, code: DocumentedErrorCode | NoResponseCode): boolean =>
  error.code === code;
