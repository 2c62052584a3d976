import type { Schemas } from '../../lib/schemas.js';

/**
 * Domain errors: what went wrong, in the service's words. They know nothing of HTTP; the errors
 * plugin is the one place that maps a `kind` to a status code and a body.
 */
export type ErrorKind =
  | 'not_found'
  | 'validation'
  | 'conflict'
  | 'bad_request'
  | 'forbidden'
  | 'unauthenticated'
  | 'unprocessable';

/**
 * The `error` codes of openapi.yaml: the generic Error's (ErrorCode), the idempotency errors' and
 * OAuth's. A service cannot answer with a code the document lacks.
 */
export type ErrorCode = Schemas['ErrorCode'] | Schemas['IdempotencyError']['error'] | Schemas['OAuthError']['error'];

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly code: ErrorCode;
  readonly fields: Record<string, string[]> | undefined;
  /** An exact body for endpoints whose error shape the spec fixes (webshop orders). */
  readonly body: unknown;
  constructor(
    kind: ErrorKind,
    code: ErrorCode,
    message: string,
    extra: { fields?: Record<string, string[]>; body?: unknown } = {},
  ) {
    super(message);
    this.kind = kind;
    this.code = code;
    this.fields = extra.fields;
    this.body = extra.body;
  }
}

export const notFound = (what: string) => new DomainError('not_found', 'not_found', `${what} not found.`);

/** 422 with the offending fields, Laravel style: `{ "users.3.email": ["…"] }`. */
export const invalid = (fields: Record<string, string[]>, message?: string) => {
  const first = Object.values(fields)[0]?.[0];
  return new DomainError('validation', 'validation_failed', message ?? first ?? 'The given data was invalid.', {
    fields,
  });
};

export const invalidField = (field: string, message: string) => invalid({ [field]: [message] });
