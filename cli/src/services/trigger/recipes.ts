// What `loyalty trigger <event-type>` does for each event type: a recipe of API steps that makes
// the server emit that event for real. No API code here (the steps are passed in), so the command
// can list the recipes in its help without loading the SDK.
import { EVENT_TYPES, type EventType } from '../../domain.js';

/**
 * What a recipe created, each id under the name the event's `data` gives it, so the emitted event
 * is recognised by comparing the fields both have (see `isEventOf`).
 */
export interface Created {
  member_id: string;
  email?: string;
  coupon_id?: string;
  storecard_id?: string;
  pass_code?: string;
  /** The storecard transaction's `transaction_reference` (`reference` in `points.changed`). */
  reference?: string;
}

/** The API steps recipes are made of (services/trigger/steps.ts); each reports what it did. */
export interface Steps {
  /** A test member of the brand: its id and e-mail. */
  createMember(): Promise<{ member_id: string; email: string }>;
  /** Issues a pass of the coupon or storecard to the member; its pass code. */
  issuePass(memberId: string, voucher: { coupon_id: string } | { storecard_id: string }): Promise<string>;
  redeemCoupon(passCode: string): Promise<void>;
  /** Earns points on a storecard pass; the transaction reference. */
  earnPoints(passCode: string): Promise<string>;
}

export interface RecipeInput {
  coupon?: string | undefined;
  storecard?: string | undefined;
}

export interface Recipe {
  /** One line for --help: what is created and which operation emits the event. */
  does: string;
  /** The voucher flag the recipe cannot do without. */
  needs?: 'coupon' | 'storecard';
  run(steps: Steps, input: Required<RecipeInput>): Promise<Created>;
}

/** A test member with a pass of the coupon or storecard. */
async function memberWithPass(steps: Steps, voucher: { coupon_id: string } | { storecard_id: string }) {
  const member = await steps.createMember();
  const pass_code = await steps.issuePass(member.member_id, voucher);
  return { ...member, ...voucher, pass_code };
}

/**
 * Event types without a recipe (one the document adds later, until it gets one) are refused with
 * the list of those that have one.
 */
export const RECIPES = {
  'member.created': {
    does: 'a test member (POST /members)',
    run: async (steps) => steps.createMember(),
  },
  'coupon.issued': {
    does: 'a test member with a pass of --coupon (POST /members/{uuid}/passes)',
    needs: 'coupon',
    run: async (steps, { coupon }) => memberWithPass(steps, { coupon_id: coupon }),
  },
  'coupon.redeemed': {
    does: 'a test member with a pass of --coupon, redeemed (POST /passes/scan)',
    needs: 'coupon',
    run: async (steps, { coupon }) => {
      const created = await memberWithPass(steps, { coupon_id: coupon });
      await steps.redeemCoupon(created.pass_code);
      return created;
    },
  },
  'points.changed': {
    does: 'a test member with a pass of --storecard, earning 10 points (POST /passes/scan/storecard)',
    needs: 'storecard',
    run: async (steps, { storecard }) => {
      const created = await memberWithPass(steps, { storecard_id: storecard });
      return { ...created, reference: await steps.earnPoints(created.pass_code) };
    },
  },
} as const satisfies Partial<Record<EventType, Recipe>>;

export type TriggerType = keyof typeof RECIPES;

/** The event types that have a recipe, in the document's order. */
export const TRIGGER_TYPES: TriggerType[] = EVENT_TYPES.filter((type): type is TriggerType => type in RECIPES);

export const recipeOf = (type: TriggerType): Recipe => RECIPES[type];

/** Whether a feed event is the one the recipe caused: every id both have is equal. */
export function isEventOf(data: Record<string, unknown>, created: Created): boolean {
  if (data.member_id !== created.member_id) return false;
  return Object.entries(created).every(([key, value]) => !(key in data) || data[key] === value);
}
