/**
 * Bulk helpers: split any input into the API's per-call limits, send the chunks with bounded
 * concurrency (the client's limiter paces them further), and report on every chunk. A chunk's
 * failure does not stop the others; nothing is thrown except the caller's abort.
 */
import type { ClientOfPaths } from './client.js';
import { LoyaltyError, toLoyaltyError } from './errors.js';
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** Items per call the API accepts on its bulk endpoints. */
export const BULK_LIMIT = 2000;

export interface BulkOptions {
  /** Items per call, 1 to 2000. Default 2000. */
  chunkSize?: number;
  /** Calls in flight at once. Default 3. */
  concurrency?: number;
  /**
   * With a prefix, chunk N is sent with `Idempotency-Key: <prefix>-<N>`, so running the same
   * input again (after a crash) replays the chunks that were done instead of repeating them.
   * Use a new prefix for new input: the same key with a different chunk is a 422 `idempotency_key_reuse`.
   * Keys are scoped to the token: the replay works while the client uses the same token.
   */
  idempotencyKeyPrefix?: string;
  signal?: AbortSignal;
  /** Called as each chunk finishes (for progress). */
  onChunk?: (report: ChunkReport<unknown, unknown>) => void;
}

export type ChunkReport<T, D> = {
  /** Position of the chunk, from 0. */
  index: number;
  size: number;
  /** The chunk's items (to retry or reject them). */
  items: T[];
  idempotencyKey: string | undefined;
  /** HTTP status; 0 when no response arrived. */
  status: number;
} & ({ ok: true; data: D; error?: undefined } | { ok: false; error: LoyaltyError; data?: undefined });

type Result<D> = { data?: D; error?: unknown; response: Response };

export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (!(Number.isInteger(size) && size >= 1))
    throw new RangeError(`chunk size must be a positive integer, got ${size}`);
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** Sends `items` in chunks through `send`; resolves with one report per chunk, in input order. */
export async function runChunked<T, D>(
  items: readonly T[],
  send: (chunk: T[], init: { headers: Record<string, string>; signal: AbortSignal | undefined }) => Promise<Result<D>>,
  options: BulkOptions = {},
): Promise<ChunkReport<T, D>[]> {
  const size = options.chunkSize ?? BULK_LIMIT;
  if (size > BULK_LIMIT) throw new RangeError(`chunkSize is at most ${BULK_LIMIT}`);
  const chunks = chunk(items, size);
  const reports: ChunkReport<T, D>[] = new Array(chunks.length);
  const { signal } = options;
  // Shared by the workers: each takes the next chunk not yet taken.
  const queue = chunks.entries();

  async function run(index: number, part: T[]): Promise<ChunkReport<T, D>> {
    const key = options.idempotencyKeyPrefix === undefined ? undefined : `${options.idempotencyKeyPrefix}-${index}`;
    const base = { index, size: part.length, items: part, idempotencyKey: key };
    try {
      const result = await send(part, { headers: key ? { 'Idempotency-Key': key } : {}, signal });
      const error = toLoyaltyError(result);
      return error
        ? { ...base, status: result.response.status, ok: false, error }
        : { ...base, status: result.response.status, ok: true, data: result.data as D };
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      const error =
        e instanceof LoyaltyError
          ? e
          : new LoyaltyError({ status: 0, code: 'network_error', message: String(e), cause: e });
      return { ...base, status: 0, ok: false, error };
    }
  }

  async function worker(): Promise<void> {
    for (const [index, part] of queue) {
      signal?.throwIfAborted();
      reports[index] = await run(index, part);
      options.onChunk?.(reports[index] as ChunkReport<unknown, unknown>);
    }
  }

  const concurrency = Math.max(1, Math.min(options.concurrency ?? 3, chunks.length));
  await Promise.all(Array.from({ length: concurrency }, worker));
  return reports;
}

/** Puts members on a tag (`POST /tags/members/bulk`), 2000 per call. */
export function addMembersToTag(
  client: ClientOfPaths,
  input: { brandId: string; tagId: string; memberIds: readonly string[] },
  options?: BulkOptions,
) {
  return runChunked(
    input.memberIds,
    (users, init) =>
      client.POST('/tags/members/bulk', { body: { brand_id: input.brandId, tag_id: input.tagId, users }, ...init }),
    options,
  );
}

/** Subscribes members to marketing by e-mail (`POST /members/subscribe`), 2000 per call. */
export function subscribeMembers(
  client: ClientOfPaths,
  input: { brandId: string; emails: readonly string[] },
  options?: BulkOptions,
) {
  return runChunked(
    input.emails,
    (email, init) => client.POST('/members/subscribe', { body: { brand_id: input.brandId, email }, ...init }),
    options,
  );
}

/** Unsubscribes members from marketing by e-mail (`POST /members/unsubscribe`), 2000 per call. */
export function unsubscribeMembers(
  client: ClientOfPaths,
  input: { brandId: string; emails: readonly string[] },
  options?: BulkOptions,
) {
  return runChunked(
    input.emails,
    (email, init) => client.POST('/members/unsubscribe', { body: { brand_id: input.brandId, email }, ...init }),
    options,
  );
}

export type Signup = Schemas['ImportSignupsRequest']['users'][number];

/** Imports sign-ups (`POST /members/signups`), 2000 per call. */
export function importSignups(
  client: ClientOfPaths,
  input: { brandId: string; users: readonly Signup[] },
  options?: BulkOptions,
) {
  return runChunked(
    input.users,
    (users, init) => client.POST('/members/signups', { body: { brand_id: input.brandId, users }, ...init }),
    options,
  );
}

export type MemberUpdate = Schemas['BulkUpdateMembersRequest']['members'][number];

/** Updates member profiles (`PUT /bulk/members`), 2000 per call; each call is all-or-nothing. */
export function updateMembers(
  client: ClientOfPaths,
  input: { brandId: string; members: readonly MemberUpdate[] },
  options?: BulkOptions,
) {
  return runChunked(
    input.members,
    (members, init) => client.PUT('/bulk/members', { body: { brand_id: input.brandId, members }, ...init }),
    options,
  );
}
