/**
 * Typed errors. HTTP errors stay values (openapi-fetch's `{ data } | { error }`); `toLoyaltyError`
 * turns an error result into one `LoyaltyError` shape. Only failures without any response
 * (connection errors, timeouts after the retries) are thrown, and then as a `LoyaltyError` too.
 */
import { REQUEST_ID_HEADER, sentRequestIdOf } from './internal/request-ids.js';

/** The spec's error codes, the generic codes of the API decisions, and the SDK's own. */
export type LoyaltyErrorCode =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation_failed'
  | 'rate_limited'
  | 'server_error'
  | 'idempotency_key_reuse'
  | 'idempotency_in_progress'
  | 'idempotency_key_invalid'
  | 'invalid_client'
  | 'invalid_scope'
  | 'network_error'
  | 'timeout'
  /** A streamed list (`streamMembers`) broke off before its end: the members yielded so far are not all. */
  | 'stream_interrupted'
  /** A response body that is not what the document says (e.g. a list that is not the list envelope). */
  | 'invalid_response'
  // Any other code the server sends (for example `pass_already_redeemed`), kept as sent.
  | (string & {});

export interface LoyaltyErrorInit {
  status: number;
  code: LoyaltyErrorCode;
  message: string;
  fields?: Record<string, string[]> | undefined;
  response?: Response | undefined;
  body?: unknown;
  cause?: unknown;
  /** Default: from `response` and `body` (see `LoyaltyError.requestId`). */
  requestId?: string | undefined;
}

export class LoyaltyError extends Error {
  override readonly name = 'LoyaltyError';
  /** HTTP status; 0 when no response was received (`network_error`, `timeout`). */
  readonly status: number;
  readonly code: LoyaltyErrorCode;
  /** Validation messages by field path (`users.3.email`), from a 422 `errors` object. */
  readonly fields: Record<string, string[]> | undefined;
  /** The raw response; its body has already been read. */
  readonly response: Response | undefined;
  /** The parsed error body as the server sent it. */
  readonly body: unknown;
  /**
   * The request id to quote when reporting the error: the server's `X-Request-Id` answer, else the
   * body's `request_id` (5XX), else the id the SDK sent the request with (also for `network_error`
   * and `timeout`: the last attempt's). Undefined when no request was sent.
   */
  readonly requestId: string | undefined;

  constructor(init: LoyaltyErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.fields = init.fields;
    this.response = init.response;
    this.body = init.body;
    this.requestId = init.requestId ?? requestIdFrom(init.response, init.body);
  }
}

function requestIdFrom(response: Response | undefined, body: unknown): string | undefined {
  const echoed = response?.headers.get(REQUEST_ID_HEADER);
  if (echoed) return echoed;
  const inBody = typeof body === 'object' && body !== null ? (body as { request_id?: unknown }).request_id : undefined;
  if (typeof inBody === 'string' && inBody) return inBody;
  return response && sentRequestIdOf(response);
}

export function isLoyaltyError(value: unknown): value is LoyaltyError {
  return value instanceof LoyaltyError;
}

const codeByStatus: Record<number, LoyaltyErrorCode> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
};

/** Maps any status and parsed body to the error's code, message and field errors. */
export function describeError(status: number, body: unknown): Pick<LoyaltyErrorInit, 'code' | 'message' | 'fields'> {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const code =
    typeof b.error === 'string' && b.error
      ? b.error
      : (codeByStatus[status] ?? (status >= 500 ? 'server_error' : `http_${status}`));
  let fields: Record<string, string[]> | undefined;
  let firstListed: string | undefined;
  if (Array.isArray(b.errors)) {
    // Webshop product-level failure: `{ status: false, errors: ["<message>"] }`.
    firstListed = typeof b.errors[0] === 'string' ? b.errors[0] : undefined;
  } else if (typeof b.errors === 'object' && b.errors !== null) {
    fields = b.errors as Record<string, string[]>;
  }
  const message =
    (typeof b.message === 'string' && b.message) ||
    // OAuth errors (RFC 6749 §5.2) describe themselves in error_description.
    (typeof b.error_description === 'string' && b.error_description) ||
    firstListed ||
    (typeof body === 'string' && body) ||
    `HTTP ${status}`;
  return { code, message, fields };
}

/**
 * The error of an openapi-fetch result as a `LoyaltyError`, or `undefined` when the call succeeded.
 *
 *     const result = await client.POST('/members', { body });
 *     const err = toLoyaltyError(result);
 *     if (err?.code === 'validation_failed') console.log(err.fields);
 */
export function toLoyaltyError(result: {
  data?: unknown;
  error?: unknown;
  response: Response;
}): LoyaltyError | undefined {
  const { response } = result;
  if (response.ok) return undefined;
  return new LoyaltyError({
    status: response.status,
    ...describeError(response.status, result.error),
    response,
    body: result.error,
  });
}

/** The data of a successful result; throws the `LoyaltyError` of a failed one (for scripts). */
export function unwrap<D>(result: { data?: D; error?: unknown; response: Response }): D {
  const err = toLoyaltyError(result);
  if (err) throw err;
  return result.data as D;
}
