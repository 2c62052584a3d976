/**
 * `@loyalty/sdk`: the typed client and the helpers an integration needs around it.
 * Webhook verification lives in `@loyalty/sdk/webhooks`, msw test handlers in `@loyalty/sdk/testing`.
 */
export { createLoyaltyClient, type ClientOfPaths, type LoyaltyClient, type LoyaltyClientOptions } from './client.js';
export type { ClientCredentials } from './auth.js';
export { isLoyaltyError, LoyaltyError, toLoyaltyError, unwrap, type LoyaltyErrorCode } from './errors.js';
export { wasReplayed } from './idempotency.js';
export { requestIdOf } from './request-id.js';
export type { PacingOptions } from './rate-limit.js';
export type { RetryNotice, RetryOptions } from './retry.js';
export type {
  ClientHooks,
  Logger,
  LogLevel,
  RequestHookInfo,
  ResponseHookInfo,
  RetryHookInfo,
} from './internal/hooks.js';
export type { CallOptions } from './retry.js';
export type { components, paths, webhooks } from './generated/openapi.js';
export { EVENT_TYPES, type EventType } from './generated/event-types.js';
export {
  iterateEvents,
  iterateMemberCoupons,
  iterateMembers,
  iterateMemberStorecards,
  type CouponPass,
  type EventFeed,
  type EventsOptions,
  type LoyaltyEvent,
  type MemberListItem,
  type MemberPassesOptions,
  type MembersOptions,
  type StorecardPass,
} from './paginate.js';
export { streamMembers, type MemberStream, type MemberStreamOptions } from './member-stream.js';
export {
  VoucherJobTimeoutError,
  waitForVoucherJob,
  type VoucherJobStatus,
  type WaitForVoucherJobOptions,
} from './jobs.js';
export {
  addMembersToTag,
  BULK_LIMIT,
  chunk,
  importSignups,
  runChunked,
  subscribeMembers,
  unsubscribeMembers,
  updateMembers,
  type BulkOptions,
  type ChunkReport,
  type MemberUpdate,
  type Signup,
} from './bulk.js';
