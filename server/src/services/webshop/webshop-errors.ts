import type { Schemas } from '../../lib/schemas.js';
import { DomainError, type ErrorKind } from '../platform/errors.js';

/**
 * The webshop order endpoint's own error bodies (spec, Errors): a validation failure is
 * `{status: false, message: "Validation failed", errors: {<field>: [<message>]}}`, every other
 * failure `{status: false, errors: [<message>]}`.
 */

export const webshopValidationBody = (errors: Record<string, string[]>): Schemas['WebshopValidationError'] => ({
  status: false,
  message: 'Validation failed',
  errors,
});

export const webshopValidationError = (errors: Record<string, string[]>) =>
  new DomainError('validation', 'validation_failed', 'Validation failed', {
    fields: errors,
    body: webshopValidationBody(errors),
  });

/** The specification's product error body; its 422 carries no code of its own. */
export const webshopError = (kind: ErrorKind, messages: string | string[]) => {
  const list = typeof messages === 'string' ? [messages] : messages;
  return new DomainError(kind, 'validation_failed', list.join(' '), {
    body: { status: false, errors: list } satisfies Schemas['WebshopProductError'],
  });
};
