import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { loadFixture } from './services/platform/fixtures.js';
import { createTestDatabase } from '#test-helpers/db.js';

// Issue 25: the sandbox operator's credential comes from the environment, checked once; a bad
// value stops the start with a message that never repeats it.

describe('LOYALTY_SANDBOX_OPERATOR_TOKEN', () => {
  it('is unset by default (no operator) and read when given', () => {
    expect(loadConfig({}).sandboxOperatorToken).toBeUndefined();
    expect(loadConfig({ LOYALTY_SANDBOX_OPERATOR_TOKEN: '' }).sandboxOperatorToken).toBeUndefined();
    const value = 'x'.repeat(16);
    expect(loadConfig({ LOYALTY_SANDBOX_OPERATOR_TOKEN: value }).sandboxOperatorToken).toBe(value);
  });

  it('refuses a short one or one with spaces, naming the variable but not the value', () => {
    for (const value of ['short-secret', 'sixteen chars or more with spaces']) {
      let error: unknown;
      try {
        loadConfig({ LOYALTY_SANDBOX_OPERATOR_TOKEN: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/LOYALTY_SANDBOX_OPERATOR_TOKEN must/);
      expect((error as Error).message).not.toContain(value);
    }
  });
});

describe('fixture clients', () => {
  it('may not hold sandbox.operator (only the operator credential has it)', async () => {
    const db = await createTestDatabase();
    try {
      await expect(
        loadFixture(db.sql, { clients: [{ client_id: 'root', client_secret: 's', abilities: ['sandbox.operator'] }] }),
      ).rejects.toThrow(/root holds sandbox\.operator/);
      expect(await db.sql`SELECT 1 FROM clients WHERE client_id = 'root'`).toHaveLength(0);
    } finally {
      await db.drop();
    }
  });
});
