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

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly fields: Record<string, string[]> | undefined;
  /** An exact body for endpoints whose error shape the spec fixes (webshop orders). */
  readonly body: unknown;
  constructor(
    kind: ErrorKind,
    code: string,
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
