// Maps input columns to the sign-up fields. The common spellings of each column in English,
// German, French, Dutch and Spanish are recognised (column-names.ts); anything else can be named
// with --map field=column. A column that looks like consent is read, or the import stops.
import { usageError } from '../errors.js';
import { ALIASES, type ImportField, looksLikeConsent, type MemberField, normalizeHeader } from './column-names.js';

export type { ImportField, MemberField };
/** A row's fields by what they are read as (a full name and an opt-in are resolved by validate.ts). */
export type MemberFields = Partial<Record<ImportField, unknown>>;
export type ExplicitMapping = Partial<Record<ImportField, string>>;

/** What a column can be mapped to, in column order. */
export const MEMBER_FIELDS = Object.keys(ALIASES) as readonly ImportField[];
/** The fields that carry consent. */
export const CONSENT_FIELDS: readonly ImportField[] = ['unsubscribed', 'subscribed'];

const BY_ALIAS = new Map<string, ImportField>(
  MEMBER_FIELDS.flatMap((field) => ALIASES[field].map((alias) => [alias, field] as const)),
);

/** "Name" in English, French, Dutch: a full name alone, the last name beside a first name. */
const SHORT_NAMES = ['name', 'nom', 'naam'];

/** The field a header is a spelling of ("Customer E-mail" too), if any. */
function aliasOf(column: string): ImportField | undefined {
  const name = normalizeHeader(column);
  return BY_ALIAS.get(name) ?? BY_ALIAS.get(name.replace(/^(member|user|customer|contact|subscriber|kunden?)/, ''));
}

/** A flag and its value as typed in a shell: `--map 'subscribed=Newsletter Status'`. */
export const shellFlag = (flag: string, value: string): string =>
  `${flag} ${/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`}`;

/**
 * Parses repeated `--map field=column` values, `fields` being what the import reads (the members
 * import's by default; `points import` has its own). An unknown field or an empty column is a
 * usage error naming the fields.
 */
export function parseMapOptions(values: readonly string[]): ExplicitMapping;
export function parseMapOptions<F extends string>(
  values: readonly string[],
  fields: readonly F[],
): Partial<Record<F, string>>;
export function parseMapOptions(
  values: readonly string[],
  fields: readonly string[] = MEMBER_FIELDS,
): Partial<Record<string, string>> {
  const explicit: Partial<Record<string, string>> = {};
  for (const value of values) {
    const at = value.indexOf('=');
    const field = at > 0 ? value.slice(0, at).trim() : '';
    if (!fields.includes(field) || at === value.length - 1) {
      throw usageError(
        `Invalid --map "${value}".`,
        `Use --map <field>=<column>, where field is one of ${fields.join(', ')}.`,
      );
    }
    explicit[field] = value.slice(at + 1);
  }
  return explicit;
}

export interface ColumnMapping {
  /** input column → field */
  readonly columns: ReadonlyMap<string, ImportField>;
  apply(fields: Record<string, unknown>): MemberFields;
}

/** The mapping of what the columns are, without judging it: explicit fields are taken even before their column is seen. */
function buildMapping(
  columns: readonly string[],
  explicit: ExplicitMapping,
  skip: readonly string[] = [],
): { mapped: Map<string, ImportField>; taken: Set<ImportField> } {
  const mapped = new Map<string, ImportField>();
  const taken = new Set<ImportField>(Object.keys(explicit) as ImportField[]);
  for (const [field, column] of Object.entries(explicit) as [ImportField, string][])
    if (columns.includes(column)) mapped.set(column, field);
  // Beside a first-name column, "Name" ("Vorname;Name", "Prénom;Nom") is the last name.
  const hasFirstName = taken.has('first_name') || columns.some((column) => aliasOf(column) === 'first_name');
  for (const column of columns) {
    if (mapped.has(column) || skip.includes(column)) continue;
    let field = aliasOf(column);
    if (field === 'name' && hasFirstName && SHORT_NAMES.includes(normalizeHeader(column))) field = 'last_name';
    if (field && !taken.has(field)) {
      mapped.set(column, field);
      taken.add(field);
    }
  }
  return { mapped, taken };
}

function mappingOf(mapped: ReadonlyMap<string, ImportField>): ColumnMapping {
  return {
    columns: mapped,
    apply(fields) {
      const result: MemberFields = {};
      for (const [column, field] of mapped) {
        if (column in fields) result[field] = fields[column];
        // A JSON object without the opt-in key gave no consent, like an empty cell.
        else if (field === 'subscribed') result[field] = undefined;
      }
      return result;
    },
  };
}

/**
 * Builds the mapping for the columns of a file. For JSON Lines, where each object may have
 * other keys, pass every key seen; the first column that maps to a field wins. `skip`: columns
 * not to read (--skip-column), consent-looking or not.
 */
export function mapColumns(
  columns: readonly string[],
  explicit: ExplicitMapping = {},
  skip: readonly string[] = [],
): ColumnMapping {
  for (const [field, column] of Object.entries(explicit) as [ImportField, string][]) {
    if (!columns.includes(column)) {
      throw usageError(
        `--map ${field}=${column}: the input has no column "${column}".`,
        `Columns found: ${columns.join(', ') || '(none)'}.`,
      );
    }
  }
  const { mapped } = buildMapping(columns, explicit, skip);
  if (![...mapped.values()].includes('email')) {
    throw usageError(
      `No e-mail column found (columns: ${columns.join(', ') || 'none'}).`,
      'Name the column "email", or pass --map email=<column>.',
    );
  }
  const unread = columns.find((column) => !mapped.has(column) && !skip.includes(column) && looksLikeConsent(column));
  if (unread !== undefined) throw unreadConsent(unread);
  return mappingOf(mapped);
}

/** A consent-looking column that is not read: the import stops before anything is sent. */
function unreadConsent(column: string): Error {
  return usageError(
    `The column "${column}" looks like consent (opt-out or opt-in) but is not read; nothing was sent.`,
    `Say how to read it: ${shellFlag('--map', `unsubscribed=${column}`)} if "yes" there means unsubscribed, ` +
      `${shellFlag('--map', `subscribed=${column}`)} if it means subscribed (opted in), ` +
      `or ${shellFlag('--skip-column', column)} if it is not about consent.`,
  );
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
  readonly #explicit: ExplicitMapping;
  readonly #skip: readonly string[];

  /** `columns` grows as rows are read. */
  constructor(columns: readonly string[], explicit: ExplicitMapping = {}, skip: readonly string[] = []) {
    this.#columns = columns;
    this.#explicit = explicit;
    this.#skip = skip;
  }

  get columns(): ReadonlyMap<string, ImportField> {
    return this.#current().columns;
  }

  apply(fields: Record<string, unknown>): MemberFields {
    return this.#current().apply(fields);
  }

  #current(): ColumnMapping {
    if (this.#columns.length !== this.#seen) {
      this.#seen = this.#columns.length;
      this.#mapping = mappingOf(buildMapping(this.#columns, this.#explicit, this.#skip).mapped);
    }
    return this.#mapping;
  }
}
