/** What the mock API's endpoints share: the typed `http`, the lifecycle, the data and a few helpers. */
import type { OpenApiHttpHandlers } from 'openapi-msw';
import type { paths } from '../generated/openapi.js';
import type { Lifecycle } from './lifecycle.js';
import type { MockLoyaltyApi, MockLoyaltyApiOptions, MockMember, Schemas } from './types.js';

export interface MockContext {
  /** openapi-msw's `http` over the generated `paths`: paths, params and response bodies are checked. */
  http: OpenApiHttpHandlers<paths>;
  lifecycle: Lifecycle;
  api: MockLoyaltyApi;
  options: MockLoyaltyApiOptions;
  /** Without a trailing slash. */
  base: string;
}

export const now = () => new Date().toISOString();
/** `YYYY-MM-DD HH:MM:SS`, the API's form of a member's dates. */
export const sql = (iso: string) => iso.slice(0, 19).replace('T', ' ');

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** Why the API would refuse this e-mail, or undefined. */
export const emailError = (api: MockLoyaltyApi, email: unknown): string | undefined =>
  typeof email !== 'string' || !EMAIL.test(email)
    ? 'The email field must be a valid email address.'
    : api.rejectEmail?.(email);

export const fullName = (m: MockMember) => [m.first_name, m.last_name].filter(Boolean).join(' ') || null;

export function addMember(api: MockLoyaltyApi, fields: Omit<MockMember, 'id'>): MockMember {
  const member: MockMember = { id: crypto.randomUUID(), subscribed_at: sql(now()), ...fields };
  api.members.set(member.email.toLowerCase(), member);
  return member;
}

export const emit = (
  api: MockLoyaltyApi,
  event: Omit<Schemas['MemberCreatedEvent'], 'id' | 'created_at' | 'organization_id'>,
) => api.events.push({ ...event, id: crypto.randomUUID(), created_at: now(), organization_id: 'org-acme' });
