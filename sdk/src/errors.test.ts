import { describe, expect, it } from 'vitest';
import { describeError, isLoyaltyError, LoyaltyError, toLoyaltyError, unwrap } from './errors.js';

const result = (status: number, error: unknown) => ({ error, response: new Response(null, { status }) });

describe('toLoyaltyError', () => {
  it('is undefined for a successful result', () => {
    expect(toLoyaltyError({ data: {}, response: new Response('{}', { status: 200 }) })).toBeUndefined();
  });

  it('takes the code from the body error field', () => {
    const err = toLoyaltyError(result(409, { message: 'Already redeemed', error: 'pass_already_redeemed' }))!;
    expect(err).toBeInstanceOf(LoyaltyError);
    expect(err).toMatchObject({ status: 409, code: 'pass_already_redeemed', message: 'Already redeemed' });
    expect(err.response?.status).toBe(409);
  });

  it('maps a 422 with an errors object to validation_failed with fields', () => {
    const err = toLoyaltyError(
      result(422, {
        message: 'The users.3.email field is required.',
        error: 'validation_failed',
        errors: { 'users.3.email': ['required'] },
      }),
    )!;
    expect(err.code).toBe('validation_failed');
    expect(err.fields).toEqual({ 'users.3.email': ['required'] });
  });

  it('maps the webshop validation shape (no error code) by status', () => {
    const err = toLoyaltyError(
      result(422, { status: false, message: 'Validation failed', errors: { email: ['bad'] } }),
    )!;
    expect(err).toMatchObject({ code: 'validation_failed', message: 'Validation failed', fields: { email: ['bad'] } });
  });

  it('takes the message of a webshop product-level failure from its errors list', () => {
    const err = toLoyaltyError(result(400, { status: false, errors: ['Product 99 does not exist'] }))!;
    expect(err).toMatchObject({ code: 'bad_request', message: 'Product 99 does not exist', fields: undefined });
  });

  it('names a 429 rate_limited and a 5xx server_error', () => {
    expect(toLoyaltyError(result(429, { message: 'Too Many Attempts.' }))!.code).toBe('rate_limited');
    expect(toLoyaltyError(result(503, 'upstream down'))!).toMatchObject({
      code: 'server_error',
      message: 'upstream down',
    });
  });

  it('keeps OAuth error codes and their descriptions', () => {
    expect(toLoyaltyError(result(401, { error: 'invalid_client' }))!).toMatchObject({
      code: 'invalid_client',
      message: 'HTTP 401',
    });
    expect(
      toLoyaltyError(result(401, { error: 'invalid_client', error_description: 'Client authentication failed.' }))!,
    ).toMatchObject({
      code: 'invalid_client',
      message: 'Client authentication failed.',
    });
  });

  it('names unknown statuses', () => {
    expect(describeError(418, undefined).code).toBe('http_418');
  });
});

describe('unwrap', () => {
  it('returns data or throws the LoyaltyError', () => {
    expect(unwrap({ data: { id: 1 }, response: new Response('{}') })).toEqual({ id: 1 });
    let thrown: unknown;
    try {
      unwrap(result(404, { message: 'Not found', error: 'not_found' }));
    } catch (e) {
      thrown = e;
    }
    expect(isLoyaltyError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'not_found', status: 404 });
  });
});
