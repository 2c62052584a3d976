// Tags: list, create, delete, and put many members on a tag.
import { BULK_LIMIT, type components, isLoyaltyError, type LoyaltyError, toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError, PartialSuccess, usageError } from '../../errors.js';
import { formatCount } from '../../ui/format.js';
import { apiFailure, call } from '../common/api.js';
import { bulkProgress, BULK_CONCURRENCY } from '../common/bulk-progress.js';
import { assertBrandKnown } from '../common/brand.js';
import { isUuid } from '../common/inputs.js';
import { findMemberIds } from '../members/members.js';
import { chunked, forEachChunk, inputLines } from '../common/streamed-input.js';

type Tag = components['schemas']['Tag'];

const tagColumns = [
  { header: 'tag', value: (tag: Tag) => tag.tag, shrink: true },
  { header: 'external reference', value: (tag: Tag) => tag.external_reference },
  { header: 'uuid', value: (tag: Tag) => tag.uuid },
  { header: 'brand', value: (tag: Tag) => tag.brand_id, optional: true },
  { header: 'created', value: (tag: Tag) => tag.created_at, optional: true },
];

export async function listTags(ctx: Context): Promise<void> {
  const { data } = await call(ctx, (api, signal) => api.GET('/tags', { signal }));
  const brand = ctx.config.settings.brand?.source === 'flag' ? ctx.config.settings.brand.value : undefined;
  const tags = brand ? data.filter((tag) => tag.brand_id === brand) : data;
  // An empty list for a brand may be a brand the API does not know: say so, as other commands do.
  if (brand && tags.length === 0) await assertBrandKnown(ctx);
  ctx.output.table(
    tags,
    tagColumns,
    brand
      ? `No tags in ${brand} yet. Create one with \`loyalty tags create\`.`
      : 'No tags yet. Create one with `loyalty tags create`.',
  );
}

export async function createTag(ctx: Context, label: string, externalReference: string): Promise<void> {
  const body = { brand_id: ctx.brand(), external_reference: externalReference, tag: label };
  const { data } = await call(ctx, (api, signal) => api.POST('/tags', { body, signal }));
  ctx.output.success(`Created tag "${data.tag}" (${data.external_reference}).`);
  ctx.output.result(data, () => `${data.uuid}`);
}

/** The tag's UUID from a UUID or an external reference (within the brand, when one is set). */
export async function resolveTagUuid(ctx: Context, tag: string): Promise<string> {
  if (isUuid(tag)) return tag;
  const { data } = await call(ctx, (api, signal) => api.GET('/tags', { signal }));
  const brand = ctx.config.settings.brand?.value;
  const matches = data.filter((t) => t.external_reference === tag && (!brand || t.brand_id === brand));
  const [match, other] = matches;
  if (match && !other) return match.uuid;
  if (!match)
    throw new CliError(`No tag with external reference "${tag}"${brand ? ` in ${brand}` : ''}.`, {
      hint: 'See `loyalty tags list`.',
    });
  throw usageError(`Several brands have a tag "${tag}".`, 'Pass --brand, or the tag UUID.');
}

export async function deleteTag(ctx: Context, tag: string): Promise<void> {
  const uuid = await resolveTagUuid(ctx, tag);
  const brand = ctx.config.settings.brand?.value;
  await call(ctx, (api, signal) =>
    api.DELETE('/tags', { body: { tag_id: uuid, ...(brand ? { brand_id: brand } : {}) }, signal }),
  );
  ctx.output.success(`Deleted tag ${tag}.`);
  if (ctx.output.json) ctx.output.result({ tag_id: uuid, deleted: true }, () => '');
}

/** A member reference: a UUID, or an e-mail to look up in the brand. */
export type MemberReference = { uuid: string } | { email: string };

/**
 * The member a line names: its first cell that is a UUID, else the first that is an e-mail. So
 * plain lists and CSVs (e.g. `loyalty members export`) both work.
 */
export function memberReference(line: string): MemberReference | undefined {
  const cells = line.split(/[,;\t]/).map((cell) => cell.trim().replace(/^"(.*)"$/, '$1'));
  const uuid = cells.find(isUuid);
  if (uuid) return { uuid };
  const email = cells.find((cell) => /^[^\s@]+@[^\s@]+$/.test(cell));
  return email ? { email } : undefined;
}

/** What is kept of a long list's problems: counts, and the first few for the screen. */
const SHOWN = 10;
/** JSON output lists at most this many unknown e-mails and unreadable lines (the counts are exact). */
const LISTED = 1000;

interface AddTally {
  sent: number;
  unknownEmails: number;
  unknownShown: string[];
  invalidLines: number;
  invalidShown: Array<{ line: number; text: string }>;
  failedChunks: number;
  failedMembers: number;
  firstError: LoyaltyError | undefined;
  chunks: number;
}

/**
 * Reads the references line by line and sends them in chunks of 2000 (e-mails looked up first,
 * POST /members/uuid), a few chunks at a time: a file of any length with flat memory. A header
 * (a first line with no UUID or e-mail) is skipped; repeats within a chunk are sent once, and
 * the API skips members already on the tag.
 */
export async function addMembersToTag(
  ctx: Context,
  tag: string,
  args: readonly string[],
  file: string | undefined,
): Promise<void> {
  const brandId = ctx.brand();
  const client = ctx.client();
  const tally: AddTally = {
    sent: 0,
    unknownEmails: 0,
    unknownShown: [],
    invalidLines: 0,
    invalidShown: [],
    failedChunks: 0,
    failedMembers: 0,
    firstError: undefined,
    chunks: 0,
  };
  const references = async function* (): AsyncGenerator<MemberReference> {
    for await (const { line, text } of inputLines(ctx, args, file)) {
      if (text.trim() === '') continue;
      const reference = memberReference(text);
      if (reference) yield reference;
      else if (line > 1 || args.length > 0) {
        tally.invalidLines += 1;
        if (tally.invalidShown.length < LISTED) tally.invalidShown.push({ line, text });
      }
    }
  };
  const progress = bulkProgress(ctx, (note) => `sent ${formatCount(tally.sent)} members${note}…`);
  try {
    await forEachChunk(chunked(references(), BULK_LIMIT), BULK_CONCURRENCY, ctx.signal, async (part) => {
      tally.chunks += 1;
      const uuids = new Set(part.flatMap((r) => ('uuid' in r ? [r.uuid] : [])));
      const emails = [
        ...new Map(part.flatMap((r) => ('email' in r ? [[r.email.toLowerCase(), r.email]] : []))).values(),
      ];
      const found = emails.length ? await findMemberIds(ctx, brandId, emails) : new Map<string, string>();
      for (const email of emails) {
        if (found.has(email.toLowerCase())) continue;
        tally.unknownEmails += 1;
        if (tally.unknownShown.length < LISTED) tally.unknownShown.push(email);
      }
      const ids = [...new Set([...uuids, ...found.values()])];
      if (ids.length === 0) return;
      // A chunk that fails (after the client's retries) does not stop the others.
      const error = await client
        .POST('/tags/members/bulk', { body: { brand_id: brandId, tag_id: tag, users: ids }, signal: ctx.signal })
        .then(toLoyaltyError, (thrown: unknown) => {
          if (ctx.signal.aborted || !isLoyaltyError(thrown)) throw thrown;
          return thrown;
        });
      if (!error) {
        tally.sent += ids.length;
        return;
      }
      tally.failedChunks += 1;
      tally.failedMembers += ids.length;
      tally.firstError ??= error;
    });
  } finally {
    progress.stop();
  }
  if (tally.chunks === 0) {
    throw usageError(
      'No member UUIDs or e-mails given.',
      'Pass them as arguments or with --file <path> (- for stdin).',
    );
  }
  if (tally.firstError) {
    if (tally.failedChunks === tally.chunks) throw apiFailure(ctx, tally.firstError);
    throw new CliError(
      `${formatCount(tally.failedMembers)} of ${formatCount(tally.failedMembers + tally.sent)} members were not added: ${tally.firstError.message}`,
      { hint: 'Run the same command again: members already on the tag are skipped.' },
    );
  }
  const summary = {
    tag,
    brand_id: brandId,
    sent: tally.sent,
    unknown_email_count: tally.unknownEmails,
    unknown_emails: tally.unknownShown,
    invalid_line_count: tally.invalidLines,
    invalid_lines: tally.invalidShown,
  };
  ctx.output.result(
    summary,
    () =>
      `Added ${formatCount(tally.sent)} members to ${tag} (members already on it or not in ${brandId} are skipped by the API).`,
  );
  for (const email of tally.unknownShown.slice(0, SHOWN)) ctx.output.warn(`not a member: ${email}`);
  for (const { line, text: bad } of tally.invalidShown.slice(0, SHOWN))
    ctx.output.warn(`line ${line}: no UUID or e-mail in "${bad}"`);
  const skipped = tally.unknownEmails + tally.invalidLines;
  if (skipped > 0) {
    throw new PartialSuccess(
      `${formatCount(skipped)} not added: ${tally.unknownEmails} e-mails are not members of ${brandId}, ${tally.invalidLines} lines had no UUID or e-mail.`,
    );
  }
}
