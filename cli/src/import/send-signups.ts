// The one call an import makes to the API, as a type: runImport takes it, the sending pass calls
// it, and the CLI's members service implements it with POST /members/signups.
import type { SignupUser } from './validate.js';

/** What the API answered for one POST /members/signups. Other failures are thrown. */
export type SignupAnswer =
  | { ok: true; new: number; found: number }
  /** 422: rowErrors maps an index in `users` to its message; empty when the batch as a whole was refused. */
  | { ok: false; message: string; rowErrors: Map<number, string> };

export type SendSignups = (
  users: SignupUser[],
  options: { idempotencyKey: string; signal: AbortSignal },
) => Promise<SignupAnswer>;
