// Names from the API that commands need for their flags and help, kept apart from the
// services so that building the command tree loads no API code (type imports only, and the
// SDK's generated event list, a module of one constant).
import type { components } from '@loyalty/sdk';
import { EVENT_TYPES, type EventType } from '@loyalty/sdk/event-types';

export { EVENT_TYPES, type EventType };

/** Profile fields a member update may change: the properties of the document's MemberProfileFields. */
export type ProfileField = keyof components['schemas']['MemberProfileFields'];

/**
 * The help text of each profile field's flag. A Record over the document's fields: a field the
 * document adds or drops is a compile error here until the flag list follows.
 */
const PROFILE_FIELD_HELP: Record<ProfileField, string> = {
  first_name: 'first name',
  last_name: 'last name',
  phone_number: 'phone number',
  birth_day: 'birth day, YYYY-MM-DD',
  street: 'street',
  house_number: 'house number',
  postcode: 'postcode',
  city: 'city',
  country: 'country',
};

export const PROFILE_FIELDS = Object.keys(PROFILE_FIELD_HELP) as ProfileField[];

export const profileFieldHelp = (field: ProfileField): string => PROFILE_FIELD_HELP[field];

/** Delivery states of the webhook delivery log (`--status`), complete by the same Record check. */
const DELIVERY_STATUS_HELP: Record<components['schemas']['WebhookDelivery']['status'], true> = {
  pending: true,
  delivered: true,
  failed: true,
};

export type DeliveryStatus = components['schemas']['WebhookDelivery']['status'];
export const DELIVERY_STATUSES = Object.keys(DELIVERY_STATUS_HELP) as DeliveryStatus[];
