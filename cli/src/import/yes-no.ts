// The yes/no words of consent columns in the languages column-names.ts knows (English, German,
// French, Dutch, Spanish), and the subscription states some exports write instead ("abgemeldet",
// "subscribed"). Compared without case, accents or a trailing full stop.

/** Lower case, no accents, no surrounding spaces or trailing full stop: "Sí." → "si". */
export const foldWord = (value: string): string => {
  // Most cells are ASCII: no accents to take off (this runs for every row of an import).
  const plain = /^[\x20-\x7e]*$/.test(value) ? value : value.normalize('NFD').replace(/\p{M}/gu, '');
  const word = plain.toLowerCase().trim();
  return word.endsWith('.') ? word.slice(0, -1) : word;
};

const YES = [
  ...['true', 'yes', 'y', 't', 'on', '1', 'x', '✓', '✔', 'checked'],
  ...['ja', 'j', 'wahr', 'an'], // de
  ...['oui', 'vrai'], // fr
  ...['waar', 'aan'], // nl (ja: de)
  ...['si', 's', 'verdadero', 'cierto'], // es
];
const NO = [
  ...['false', 'no', 'n', 'f', 'off', '0', 'unchecked'],
  ...['nein', 'falsch', 'aus'], // de
  ...['non', 'faux'], // fr
  ...['nee', 'onwaar', 'uit'], // nl
  ...['falso'], // es (no: en)
];
/** A state rather than an answer: it means the same in an opt-out and an opt-in column. */
const SUBSCRIBED_STATES = [
  ...['subscribed', 'active', 'opted in', 'optin'],
  ...['abonniert', 'angemeldet', 'eingetragen'],
  ...['abonne', 'abonnee', 'inscrit', 'inscrite'],
  ...['aangemeld', 'ingeschreven', 'geabonneerd'],
  ...['suscrito', 'suscrita', 'alta', 'de alta', 'dado de alta'],
];
const UNSUBSCRIBED_STATES = [
  ...['unsubscribed', 'opted out', 'optout', 'never subscribed'],
  ...['abgemeldet', 'ausgetragen', 'abbestellt'],
  ...['desabonne', 'desabonnee', 'desinscrit', 'desinscrite'],
  ...['afgemeld', 'uitgeschreven'],
  ...['baja', 'de baja', 'dado de baja', 'dada de baja', 'desuscrito', 'desuscrita'],
];

const ANSWERS = new Map<string, boolean>([
  ...YES.map((word) => [word, true] as const),
  ...NO.map((word) => [word, false] as const),
]);
const STATES = new Map<string, 'subscribed' | 'unsubscribed'>([
  ...SUBSCRIBED_STATES.map((word) => [word, 'subscribed'] as const),
  ...UNSUBSCRIBED_STATES.map((word) => [word, 'unsubscribed'] as const),
]);

/** What a consent cell says: an answer to the column's question, a subscription state, nothing, or neither. */
export type ConsentCell =
  | { kind: 'answer'; yes: boolean }
  | { kind: 'state'; unsubscribed: boolean }
  | { kind: 'empty' }
  | { kind: 'unknown' };

export function readConsentCell(value: unknown): ConsentCell {
  if (value === undefined || value === null) return { kind: 'empty' };
  if (typeof value === 'boolean') return { kind: 'answer', yes: value };
  if (value === 0 || value === 1) return { kind: 'answer', yes: value === 1 };
  if (typeof value !== 'string') return { kind: 'unknown' };
  const word = foldWord(value);
  if (word === '') return { kind: 'empty' };
  const answer = ANSWERS.get(word);
  if (answer !== undefined) return { kind: 'answer', yes: answer };
  const state = STATES.get(word.replace(/[-_]/g, ' '));
  if (state !== undefined) return { kind: 'state', unsubscribed: state === 'unsubscribed' };
  return { kind: 'unknown' };
}

/**
 * Whether a member is unsubscribed by a cell of an opt-out column (`optIn` false: "Abgemeldet",
 * yes = unsubscribed) or of an opt-in column (`optIn` true: "Newsletter", yes = subscribed).
 * An empty opt-out cell is "not opted out" (undefined: the API's default, subscribed); an empty
 * opt-in cell is no consent given, so unsubscribed.
 */
export function unsubscribedBy(value: unknown, optIn: boolean): boolean | undefined | 'invalid' {
  const cell = readConsentCell(value);
  switch (cell.kind) {
    case 'answer':
      return optIn ? !cell.yes : cell.yes;
    case 'state':
      return cell.unsubscribed;
    case 'empty':
      return optIn ? true : undefined;
    default:
      return 'invalid';
  }
}
