// Maps input columns to the signup fields. Common spellings are recognised ("E-mail",
// "First name", "surname"); anything else can be named with --map field=column.
import { usageError } from '../errors.js';
import type { SignupUser } from '../generated/signup-user.js';

/** A field of a sign-up (the users item of POST /members/signups). */
export type MemberField = keyof SignupUser;
export type MemberFields = Partial<Record<MemberField, unknown>>;

/**
 * The column names each field is recognised by (normalized), in column order. A Record of every
 * field: it compiles only while it names each field of the sign-up item, and no other.
 */
const ALIASES: Record<MemberField, string[]> = {
  email: ['email', 'emailaddress', 'mail', 'mailaddress'],
  first_name: ['firstname', 'givenname', 'forename', 'first', 'vorname'],
  last_name: ['lastname', 'surname', 'familyname', 'last', 'nachname'],
  unsubscribed: ['unsubscribed', 'unsubscribe', 'optedout', 'optout'],
  subscribed_at: ['subscribedat', 'subscriptiondate', 'signupdate', 'signedupat', 'joinedat', 'joined'],
};

/** The fields of a sign-up, in column order. */
export const MEMBER_FIELDS = Object.keys(ALIASES) as readonly MemberField[];

const normalize = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

const BY_ALIAS = new Map<string, MemberField>(
  MEMBER_FIELDS.flatMap((field) => ALIASES[field].map((alias) => [alias, field] as const)),
);

/** Parses repeated `--map field=column` values. */
export function parseMapOptions(values: readonly string[]): Partial<Record<MemberField, string>> {
  const explicit: Partial<Record<MemberField, string>> = {};
  for (const value of values) {
    const at = value.indexOf('=');
    const field = at > 0 ? value.slice(0, at).trim() : '';
    if (!(MEMBER_FIELDS as readonly string[]).includes(field) || at === value.length - 1) {
      throw usageError(
        `Invalid --map "${value}".`,
        `Use --map <field>=<column>, where field is one of ${MEMBER_FIELDS.join(', ')}.`,
      );
    }
    explicit[field as MemberField] = value.slice(at + 1);
  }
  return explicit;
}

export interface ColumnMapping {
  /** input column → field */
  readonly columns: ReadonlyMap<string, MemberField>;
  apply(fields: Record<string, unknown>): MemberFields;
}

/** The mapping of what the columns are, without judging it: explicit fields are taken even before their column is seen. */
function buildMapping(
  columns: readonly string[],
  explicit: Partial<Record<MemberField, string>>,
): { mapped: Map<string, MemberField>; taken: Set<MemberField> } {
  const mapped = new Map<string, MemberField>();
  const taken = new Set<MemberField>(Object.keys(explicit) as MemberField[]);
  for (const [field, column] of Object.entries(explicit) as [MemberField, string][])
    if (columns.includes(column)) mapped.set(column, field);
  for (const column of columns) {
    if (mapped.has(column)) continue;
    const field =
      BY_ALIAS.get(normalize(column)) ?? BY_ALIAS.get(normalize(column).replace(/^(member|user|customer)/, ''));
    if (field && !taken.has(field)) {
      mapped.set(column, field);
      taken.add(field);
    }
  }
  return { mapped, taken };
}

function mappingOf(mapped: ReadonlyMap<string, MemberField>): ColumnMapping {
  return {
    columns: mapped,
    apply(fields) {
      const result: MemberFields = {};
      for (const [column, field] of mapped) {
        if (column in fields) result[field] = fields[column];
      }
      return result;
    },
  };
}

/**
 * Builds the mapping for the columns of a file. For JSON Lines, where each object may have
 * other keys, pass every key seen; the first column that maps to a field wins.
 */
export function mapColumns(
  columns: readonly string[],
  explicit: Partial<Record<MemberField, string>> = {},
): ColumnMapping {
  for (const [field, column] of Object.entries(explicit) as [MemberField, string][]) {
    if (!columns.includes(column)) {
      throw usageError(
        `--map ${field}=${column}: the input has no column "${column}".`,
        `Columns found: ${columns.join(', ') || '(none)'}.`,
      );
    }
  }
  const { mapped } = buildMapping(columns, explicit);
  if (![...mapped.values()].includes('email')) {
    throw usageError(
      `No e-mail column found (columns: ${columns.join(', ') || 'none'}).`,
      'Name the column "email", or pass --map email=<column>.',
    );
  }
  return mappingOf(mapped);
}

/**
 * The mapping of JSON Lines read so far, whose keys appear row by row. A key is mapped when it
 * first appears and later keys only take fields still free, so each row maps exactly as it would
 * with every key of the file known (mapColumns over them, which also judges the mapping at the end).
 */
export class GrowingMapping implements ColumnMapping {
  #seen = 0;
  #mapping: ColumnMapping = mappingOf(new Map());
  readonly #columns: readonly string[];
  readonly #explicit: Partial<Record<MemberField, string>>;

  /** `columns` grows as rows are read. */
  constructor(columns: readonly string[], explicit: Partial<Record<MemberField, string>> = {}) {
    this.#columns = columns;
    this.#explicit = explicit;
  }

  get columns(): ReadonlyMap<string, MemberField> {
    return this.#current().columns;
  }

  apply(fields: Record<string, unknown>): MemberFields {
    return this.#current().apply(fields);
  }

  #current(): ColumnMapping {
    if (this.#columns.length !== this.#seen) {
      this.#seen = this.#columns.length;
      this.#mapping = mappingOf(buildMapping(this.#columns, this.#explicit).mapped);
    }
    return this.#mapping;
  }
}
