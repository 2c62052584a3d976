import { describe, expect, it } from 'vitest';
import { OLDEST_POSTGRES, requireSupportedVersion } from './boot.js';
import type { Sql } from './db/pool.js';
import { StartupError } from './lib/startup-errors.js';

/** A server that answers the version query only: what the check asks of PostgreSQL (13 cannot be started here). */
const answering = (num: number, version: string) => (async () => [{ v: num, version }]) as unknown as Sql;

describe('requireSupportedVersion', () => {
  it(`stops a start on PostgreSQL older than ${OLDEST_POSTGRES} with one line naming the version, the address and the fix`, async () => {
    const failure = await requireSupportedVersion(
      answering(130_012, '13.12'),
      'postgres://u:secret@db.internal:5433/loyalty',
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StartupError);
    const message = (failure as Error).message;
    expect(message).toBe(
      'PostgreSQL 13.12 at db.internal:5433 is too old: the server needs PostgreSQL 14 or newer ' +
        '(point DATABASE_URL at a newer server, or unset it to use the embedded PostgreSQL 18).',
    );
    expect(message).not.toContain('secret');
  });

  it('accepts 14 to 18 and answers the major version', async () => {
    for (const [num, major] of [
      [140_019, 14],
      [150_014, 15],
      [170_006, 17],
      [180_001, 18],
    ] as const) {
      expect(await requireSupportedVersion(answering(num, String(major)), 'postgres://db/x')).toBe(major);
    }
  });
});
