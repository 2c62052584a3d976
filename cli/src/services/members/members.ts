// Members: look up, show, change, delete, (un)subscribe. Import and export live in their own files.
import type { components } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import type { ProfileField } from '../../domain.js';
import { usageError } from '../../errors.js';
import { call, dataOf, request } from '../common/api.js';
import { formatCount } from '../../ui/format.js';
import { BULK_CONCURRENCY, bulkProgress } from '../common/bulk-progress.js';
import { chunk, confirm, isUuid } from '../common/inputs.js';
import { chunked, forEachChunk, inputLines } from '../common/streamed-input.js';

type MemberResponse = components['schemas']['MemberResponse'];

/** Accepts a member UUID or an e-mail address; e-mails are looked up in the brand. */
export async function resolveMemberId(ctx: Context, brandId: string, member: string): Promise<string> {
  if (isUuid(member)) return member;
  if (!member.includes('@')) throw usageError(`"${member}" is neither a member UUID nor an e-mail address.`);
  const found = await call(ctx, (api, signal) =>
    api.GET('/members', { params: { query: { brand_id: brandId, email: member } }, signal }),
  );
  return found.member_id;
}

/** E-mail → UUID for many e-mails (POST /members/uuid, 2000 per call); unknown e-mails are left out. */
export async function findMemberIds(
  ctx: Context,
  brandId: string,
  emails: readonly string[],
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const part of chunk(emails, 2000)) {
    const answer = await call(ctx, (api, signal) =>
      api.POST('/members/uuid', { body: { brand_id: brandId, emails: part }, signal }),
    );
    for (const [email, id] of Object.entries(answer.data)) ids.set(email.toLowerCase(), id);
  }
  return ids;
}

/** "active, valid until 2026-12-31", "expired on 2026-11-27", "redeemed (valid until …)". */
export function passState(pass: { status: string; expiration_date?: string | null }): string {
  const date = pass.expiration_date;
  if (!date) return pass.status === 'active' ? 'active, no expiry' : pass.status;
  if (pass.status === 'expired') return `expired on ${date}`;
  if (pass.status === 'active') return `active, valid until ${date}`;
  return `${pass.status} (valid until ${date})`;
}

function printMember(ctx: Context, member: MemberResponse): void {
  ctx.output.result(member, () => {
    const p = member.profile;
    const lines: Array<[string, unknown]> = [
      ['identifier', member.identifier],
      ['email', p.email],
      ['name', p.full_name],
      ['brand', member.brand_id],
      [
        'subscribed',
        member.unsubscribed
          ? `no (unsubscribed; joined ${member.subscribed_at})`
          : `yes, since ${member.subscribed_at}`,
      ],
      ['phone', p.phone_number],
      ['birth day', p.birth_day],
      ['address', [p.street, p.house_number, p.postcode, p.city, p.country].filter(Boolean).join(' ') || null],
    ];
    const width = Math.max(...lines.map(([label]) => label.length));
    const text = lines.map(
      ([label, value]) => `${ctx.output.out.bold(label.padEnd(width))}  ${value ?? ctx.output.out.dim('–')}`,
    );
    const passes = [
      ...member.coupons.map((pass) => ({ kind: 'coupon', ...pass })),
      ...member.storecards.map((pass) => ({ kind: 'storecard', ...pass })),
    ];
    for (const pass of passes)
      text.push(
        `${ctx.output.out.bold('pass'.padEnd(width))}  ${pass.kind} ${pass.pass_code} ${passState(pass)}  ${pass.wallet_url}`,
      );
    return text.join('\n');
  });
}

export async function showMember(ctx: Context, member: string): Promise<void> {
  const brandId = ctx.brand();
  const id = await resolveMemberId(ctx, brandId, member);
  printMember(
    ctx,
    await call(ctx, (api, signal) =>
      api.GET('/members/{uuid}', { params: { path: { uuid: id }, query: { brand_id: brandId } }, signal }),
    ),
  );
}

export async function updateMember(
  ctx: Context,
  member: string,
  changes: Partial<Record<ProfileField, string | null>>,
): Promise<void> {
  if (Object.keys(changes).length === 0)
    throw usageError('Nothing to change.', 'Pass at least one field, e.g. --first-name Ada, or --clear city.');
  const brandId = ctx.brand();
  const id = await resolveMemberId(ctx, brandId, member);
  const updated = await call(ctx, (api, signal) =>
    api.PUT('/members/{uuid}', { params: { path: { uuid: id } }, body: { brand_id: brandId, ...changes }, signal }),
  );
  ctx.output.success(`Updated ${Object.keys(changes).join(', ')} of ${updated.profile.email}.`);
  printMember(ctx, updated);
}

export async function deleteMember(ctx: Context, member: string, yes: boolean | undefined): Promise<void> {
  const brandId = ctx.brand();
  const id = await resolveMemberId(ctx, brandId, member);
  await confirm(
    ctx,
    `Delete member ${member} from ${brandId}, with all its links to the brand? This cannot be undone.`,
    yes,
  );
  await call(ctx, (api, signal) =>
    api.DELETE('/members/{uuid}', { params: { path: { uuid: id }, query: { brand_id: brandId } }, signal }),
  );
  ctx.output.success(`Deleted member ${member} from ${brandId}.`);
  if (ctx.output.json) ctx.output.result({ identifier: id, brand_id: brandId, deleted: true }, () => '');
}

/** The e-mail a line names: the line itself, or the first cell with an @ in a CSV line. */
function emailOf(line: string): string | undefined {
  return line
    .split(/[,;\t]/)
    .map((cell) => cell.trim().replace(/^"|"$/g, ''))
    .find((cell) => cell.includes('@'));
}

/**
 * (Un)subscribes the e-mails of the arguments and the file. One e-mail is one PATCH; a list is
 * read line by line and sent 2000 e-mails per POST, a few at a time, so any length runs in flat memory.
 */
export async function setSubscription(
  ctx: Context,
  subscribe: boolean,
  args: readonly string[],
  file: string | undefined,
): Promise<void> {
  const [single] = args;
  if (!file && args.length === 1 && single !== undefined) return setOneSubscription(ctx, subscribe, single);
  const brandId = ctx.brand();
  let requested = 0;
  let changed = 0;
  const emails = async function* (): AsyncGenerator<string> {
    for await (const { text } of inputLines(ctx, args, file)) {
      const email = emailOf(text);
      if (email) yield email;
    }
  };
  const verb = subscribe ? 'Subscribed' : 'Unsubscribed';
  const progress = bulkProgress(
    ctx,
    (note) => `${verb.toLowerCase()} ${formatCount(changed)} of ${formatCount(requested)}${note}…`,
  );
  try {
    await forEachChunk(chunked(emails(), 2000), BULK_CONCURRENCY, ctx.signal, async (part) => {
      const email = [...new Map(part.map((e) => [e.toLowerCase(), e])).values()];
      requested += email.length;
      const body = { brand_id: brandId, email };
      const result = await request(ctx, (api, signal) =>
        subscribe
          ? api.POST('/members/subscribe', { body, signal })
          : api.POST('/members/unsubscribe', { body, signal }),
      );
      // 404 on a chunk means none of its e-mails is a member: nothing changed there.
      if (result.response.status === 404) return;
      changed += dataOf(ctx, result).data.amount;
    });
  } finally {
    progress.stop();
  }
  if (requested === 0)
    throw usageError('No e-mail addresses given.', 'Pass them as arguments or with --file <path> (- for stdin).');
  ctx.output.result(
    { requested, changed },
    () =>
      `${verb} ${formatCount(changed)} of ${formatCount(requested)}` +
      (changed < requested
        ? ` (the others were ${subscribe ? 'subscribed' : 'unsubscribed'} already or are not members).`
        : '.'),
  );
}

async function setOneSubscription(ctx: Context, subscribe: boolean, email: string): Promise<void> {
  const brandId = ctx.brand();
  const body = { brand_id: brandId, email };
  const result = await request(ctx, (api, signal) =>
    subscribe ? api.PATCH('/members/subscribe', { body, signal }) : api.PATCH('/members/unsubscribe', { body, signal }),
  );
  if (result.response.status === 400 && subscribe) {
    ctx.output.info(`${email} is already subscribed to ${brandId}.`);
    if (ctx.output.json) ctx.output.result({ email, changed: 0 }, () => '');
    return;
  }
  dataOf(ctx, result);
  ctx.output.success(`${subscribe ? 'Subscribed' : 'Unsubscribed'} ${email} (${brandId}).`);
  if (ctx.output.json) ctx.output.result({ email, changed: 1 }, () => '');
}
