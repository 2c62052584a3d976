// `members import --update`: which rows of the file change an existing member's profile. The
// brand's members come from the member list (POST /members/list), which answers `full_name` and
// `last_name` but no `first_name`: the server builds `full_name` as the non-empty first and last
// names joined by a space, so the first name is what stands before " <last_name>".
import type { MemberUpdate } from '@loyalty/sdk';
import type { AcceptedRow } from './validate.js';

export type { MemberUpdate };

/** A member of the brand as far as an import can change it. */
export interface BrandMember {
  id: string;
  first_name: string | null;
  last_name: string | null;
}

/** One item of the member list, the fields this needs. */
export interface MemberListEntry {
  identifier: string;
  email: string;
  full_name: string | null;
  last_name: string | null;
}

/** The first name behind `full_name` (`concat_ws(' ', first, last)` of the non-empty ones). */
export function firstNameOf(fullName: string | null, lastName: string | null): string | null {
  if (!fullName) return null;
  if (!lastName) return fullName;
  if (fullName === lastName) return null;
  return fullName.endsWith(` ${lastName}`) ? fullName.slice(0, -lastName.length - 1) : fullName;
}

export function brandMemberOf(entry: MemberListEntry): [email: string, member: BrandMember] {
  return [
    entry.email.toLowerCase(),
    {
      id: entry.identifier,
      first_name: firstNameOf(entry.full_name, entry.last_name),
      last_name: entry.last_name || null,
    },
  ];
}

export interface UpdatePlan {
  /** Rows whose e-mail is not a member of the brand yet: the sign-ups create or link them. */
  created: number;
  /** Members whose names in the file differ: only the differing names are sent. */
  updates: MemberUpdate[];
  unchanged: number;
}

/** Compares each row's names with the member's; a name the row leaves empty is not changed. */
export function planUpdates(rows: readonly AcceptedRow[], members: ReadonlyMap<string, BrandMember>): UpdatePlan {
  const plan: UpdatePlan = { created: 0, updates: [], unchanged: 0 };
  for (const { user } of rows) {
    const member = members.get(user.email.toLowerCase());
    if (!member) {
      plan.created += 1;
      continue;
    }
    const update: MemberUpdate = { identifier: member.id };
    for (const field of ['first_name', 'last_name'] as const) {
      const wanted = user[field];
      if (wanted !== undefined && wanted !== (member[field] ?? '')) update[field] = wanted;
    }
    if (Object.keys(update).length > 1) plan.updates.push(update);
    else plan.unchanged += 1;
  }
  return plan;
}

/** PUT /bulk/members for one batch: how many the API updated. Failures are thrown. */
export type SendMemberUpdates = (
  members: MemberUpdate[],
  options: { signal: AbortSignal },
) => Promise<{ updated: number; notFound: string[] }>;

export interface ApplyUpdates {
  updates: readonly MemberUpdate[];
  batchSize: number;
  concurrency: number;
  send: SendMemberUpdates;
  signal: AbortSignal;
  /** After each acknowledged batch, with what it updated. */
  onBatch: (updated: number) => Promise<void> | void;
}

/** Sends the updates a few batches at a time; stops taking batches on Ctrl-C or the first failure. */
export async function applyUpdates(request: ApplyUpdates): Promise<void> {
  const batches: MemberUpdate[][] = [];
  for (let i = 0; i < request.updates.length; i += request.batchSize)
    batches.push(request.updates.slice(i, i + request.batchSize));
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined && !request.signal.aborted) {
      const batch = batches[next++];
      if (!batch) break;
      try {
        const answer = await request.send(batch, { signal: request.signal });
        await request.onBatch(answer.updated);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(request.concurrency, batches.length)) }, worker));
  if (failure !== undefined && !request.signal.aborted) throw failure;
}
