// Names from the API that commands need for their flags and help, kept apart from the
// services so that building the command tree loads no API code.

export const EVENT_TYPES = ['member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed'] as const;

export const PROFILE_FIELDS = ['first_name', 'last_name', 'phone_number', 'birth_day', 'street', 'house_number', 'postcode', 'city', 'country'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
