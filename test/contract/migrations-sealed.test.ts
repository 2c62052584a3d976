import { appendFile, cp, mkdtemp, rm, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkMigrations, migrationsDir } from '../../scripts/seal-migrations.mjs';

/**
 * A committed migration is never edited (CONTRIBUTING, "schema changes"): a database that applied
 * it keeps what the old text did. server/migrations/SHA256SUMS seals each file; a new migration is
 * added to it by `npm run migrations:seal`.
 */
describe('server/migrations', () => {
  it('every migration is sealed in SHA256SUMS and unchanged', () => {
    expect(checkMigrations()).toEqual([]);
  });

  describe('the check can fail', () => {
    let copy: string | undefined;
    afterEach(async () => {
      if (copy) await rm(copy, { recursive: true, force: true });
    });
    const copyOfMigrations = async () => {
      copy = await mkdtemp(path.join(os.tmpdir(), 'loyalty-migrations-'));
      await cp(migrationsDir, copy, { recursive: true });
      return copy;
    };

    it('an edited migration: "migrations are never edited: add a new file"', async () => {
      const dir = await copyOfMigrations();
      await appendFile(path.join(dir, '0001_core.sql'), '\n-- an afterthought\n');
      expect(checkMigrations(dir)).toEqual([
        expect.stringMatching(
          /^0001_core\.sql changed after it was committed: migrations are never edited, add a new file/,
        ),
      ]);
    });

    it('a new migration without its line, and a sealed one removed', async () => {
      const dir = await copyOfMigrations();
      await appendFile(path.join(dir, '9999_new.sql'), 'SELECT 1;\n');
      await unlink(path.join(dir, '0002_requests.sql'));
      expect(checkMigrations(dir)).toEqual([
        expect.stringMatching(/^9999_new\.sql is not sealed: run `npm run migrations:seal`/),
        expect.stringMatching(/^0002_requests\.sql is sealed but gone/),
      ]);
    });
  });
});
