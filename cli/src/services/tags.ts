// Tags: list, create, delete, and put many members on a tag.
import type { components } from '@loyalty/sdk';
import type { Context } from '../context.js';
import { CliError, PartialSuccess, usageError } from '../errors.js';
import { formatCount } from '../ui/format.js';
import { apiFailure, call } from './api.js';
import { isUuid, readTextInput } from './inputs.js';
import { findMemberIds } from './members.js';

type Tag = components['schemas']['Tag'];

const tagColumns = [
  { header: 'tag', value: (tag: Tag) => tag.tag },
  { header: 'external reference', value: (tag: Tag) => tag.external_reference },
  { header: 'uuid', value: (tag: Tag) => tag.uuid },
  { header: 'brand', value: (tag: Tag) => tag.brand_id },
  { header: 'created', value: (tag: Tag) => tag.created_at },
];

export async function listTags(ctx: Context): Promise<void> {
  const { data } = await call(ctx, (api, signal) => api.GET('/tags', { signal }));
  const brand = ctx.config.settings.brand?.source === 'flag' ? ctx.config.settings.brand.value : undefined;
  ctx.output.table(
    brand ? data.filter((tag) => tag.brand_id === brand) : data,
    tagColumns,
    'No tags yet. Create one with `loyalty tags create`.',
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

export interface MemberReferences {
  uuids: string[];
  emails: string[];
  invalid: Array<{ line: number; text: string }>;
}

/**
 * Reads member references: per line, the first cell that is a UUID, else the first that is an
 * e-mail. So plain lists and CSVs (e.g. `loyalty members export`) both work; a header is skipped.
 */
export function parseMemberReferences(text: string): MemberReferences {
  const references: MemberReferences = { uuids: [], emails: [], invalid: [] };
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const cells = line.split(/[,;\t]/).map((cell) => cell.trim().replace(/^"(.*)"$/, '$1'));
    const uuid = cells.find(isUuid);
    const email = uuid ? undefined : cells.find((cell) => /^[^\s@]+@[^\s@]+$/.test(cell));
    const value = uuid ?? email;
    if (!value) {
      if (i > 0) references.invalid.push({ line: i + 1, text: line });
      return;
    }
    const key = value.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    (uuid ? references.uuids : references.emails).push(value);
  });
  return references;
}

export async function addMembersToTag(
  ctx: Context,
  tag: string,
  args: readonly string[],
  file: string | undefined,
): Promise<void> {
  const brandId = ctx.brand();
  const text = [args.join('\n'), file ? await readTextInput(ctx, file) : ''].filter(Boolean).join('\n');
  const references = parseMemberReferences(text);
  if (references.uuids.length + references.emails.length === 0) {
    throw usageError(
      'No member UUIDs or e-mails given.',
      'Pass them as arguments or with --file <path> (- for stdin).',
    );
  }
  const found = references.emails.length
    ? await findMemberIds(ctx, brandId, references.emails)
    : new Map<string, string>();
  const unknownEmails = references.emails.filter((email) => !found.has(email.toLowerCase()));
  const ids = [...new Set([...references.uuids, ...found.values()])];
  const { addMembersToTag: addInChunks } = await import('@loyalty/sdk');
  let done = 0;
  let reportedAt = Date.now();
  const reports = await addInChunks(
    ctx.client(),
    { brandId, tagId: tag, memberIds: ids },
    {
      signal: ctx.signal,
      onChunk: (report) => {
        if (report.ok) done += report.size;
        if (Date.now() - reportedAt >= 2000 && done < ids.length) {
          reportedAt = Date.now();
          ctx.output.info(`sent ${formatCount(done)} of ${formatCount(ids.length)} members…`);
        }
      },
    },
  );
  const failed = reports.filter((report) => !report.ok);
  const [firstFailed] = failed;
  if (firstFailed) {
    if (failed.length === reports.length) throw apiFailure(ctx, firstFailed.error);
    const missed = failed.reduce((sum, report) => sum + report.size, 0);
    throw new CliError(
      `${formatCount(missed)} of ${formatCount(ids.length)} members were not added: ${firstFailed.error.message}`,
      {
        hint: 'Run the same command again: members already on the tag are skipped.',
      },
    );
  }
  const summary = {
    tag,
    brand_id: brandId,
    sent: ids.length,
    unknown_emails: unknownEmails,
    invalid_lines: references.invalid,
  };
  ctx.output.result(
    summary,
    () =>
      `Added ${formatCount(ids.length)} members to ${tag} (members already on it or not in ${brandId} are skipped by the API).`,
  );
  for (const email of unknownEmails.slice(0, 10)) ctx.output.warn(`not a member: ${email}`);
  for (const { line, text: bad } of references.invalid.slice(0, 10))
    ctx.output.warn(`line ${line}: no UUID or e-mail in "${bad}"`);
  const skipped = unknownEmails.length + references.invalid.length;
  if (skipped > 0) {
    throw new PartialSuccess(
      `${formatCount(skipped)} not added: ${unknownEmails.length} e-mails are not members of ${brandId}, ${references.invalid.length} lines had no UUID or e-mail.`,
    );
  }
}
