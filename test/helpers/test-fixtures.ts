import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Fixture, withoutRecords } from '../../server/src/services/platform/fixtures.js';

/** The demo fixtures `npm start` loads: the catalogue, clients and the demo records (tags, members, passes, a voucher job). */
export const DEMO_FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/demo.json');

/**
 * The tests' fixture file: the demo fixtures without their records, so a test counts only the
 * tags and members it made. Every test database is seeded with it (global-setup.ts), and servers
 * whose sandbox reset loads a fixture file again load this one. Written once per content of
 * demo.json to the temporary directory (a rename: a file that exists is complete).
 */
export const TEST_FIXTURES = ((): string => {
  const text = `${JSON.stringify(withoutRecords(JSON.parse(readFileSync(DEMO_FIXTURES, 'utf8')) as Fixture), null, 2)}\n`;
  const dir = path.join(os.tmpdir(), 'loyalty-test-fixtures');
  const file = path.join(
    dir,
    `demo-without-records-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`,
  );
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, text);
  renameSync(partial, file);
  return file;
})();
