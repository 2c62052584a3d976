/** What changed between two versions of a pass, as a wallet would announce it. */
import { type PassJson, passFields } from './pass-json.js';

/** One change: a field (by its `key`), or the pass's `voided` or `expirationDate`. */
export interface PassChange {
  key: string;
  label: string;
  /** The old value; `undefined` when the field is new. */
  from: string | number | boolean | undefined;
  /** The new value; `undefined` when the field is gone. */
  to: string | number | boolean | undefined;
  /**
   * What a phone would say: the field's `changeMessage` with `%@` replaced by the new value
   * ("Balance 170"), or else `<label> <from> → <to>` ("balance 120 → 170").
   */
  message: string;
}

const shown = (value: PassChange['from']) => (value === undefined ? '—' : String(value));

/**
 * The changes from `before` to `after`: each field whose value changed, appeared or went (in
 * the order of `after`, then the fields that went), then `voided` and `expirationDate`.
 */
export function diffPasses(before: PassJson, after: PassJson): PassChange[] {
  const old = new Map(passFields(before).map((f) => [f.key, f]));
  const changes: PassChange[] = [];
  const seen = new Set<string>();
  for (const field of passFields(after)) {
    if (seen.has(field.key)) continue;
    seen.add(field.key);
    const previous = old.get(field.key);
    if (previous && previous.value === field.value) continue;
    const label = field.label ?? previous?.label ?? field.key;
    const from = previous?.value;
    const message =
      typeof field.changeMessage === 'string' && field.changeMessage.includes('%@')
        ? field.changeMessage.replaceAll('%@', String(field.value))
        : `${label} ${shown(from)} → ${field.value}`;
    changes.push({ key: field.key, label, from, to: field.value, message });
  }
  for (const [key, field] of old) {
    if (seen.has(key)) continue;
    seen.add(key);
    const label = field.label ?? key;
    changes.push({ key, label, from: field.value, to: undefined, message: `${label} ${field.value} → —` });
  }
  const voidedBefore = before.voided === true;
  const voidedAfter = after.voided === true;
  if (voidedBefore !== voidedAfter)
    changes.push({
      key: 'voided',
      label: 'voided',
      from: voidedBefore,
      to: voidedAfter,
      message: voidedAfter ? 'The pass is voided (redeemed or expired)' : 'The pass is no longer voided',
    });
  if (before.expirationDate !== after.expirationDate)
    changes.push({
      key: 'expirationDate',
      label: 'expires',
      from: before.expirationDate,
      to: after.expirationDate,
      message:
        after.expirationDate === undefined
          ? 'The pass no longer expires'
          : `expires ${shown(before.expirationDate)} → ${after.expirationDate}`,
    });
  return changes;
}
