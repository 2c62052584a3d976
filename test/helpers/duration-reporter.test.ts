import { describe, expect, it } from 'vitest';
import { gist } from './duration-reporter.js';

describe("the reporter's one-line gist of a failure (printed last by npm test, where CI's log tail shows it)", () => {
  it("keeps an assertion's own message and its verdict: the first line and the last", () => {
    let message = '';
    try {
      expect(130, 'Loyalty reference server listening on http://127.0.0.1:1\n  Data  /tmp/x\nCtrl-C to stop.\n').toBe(
        0,
      );
    } catch (error) {
      message = (error as Error).message;
    }
    expect(gist(message)).toBe(
      'Loyalty reference server listening on http://127.0.0.1:1 … : expected 130 to be +0 // Object.is equality',
    );
  });

  it('is the message itself when it has one line, and says "failed" when there is none', () => {
    expect(gist('expected 409 to be 201')).toBe('expected 409 to be 201');
    expect(gist(undefined)).toBe('failed');
  });

  it('cuts each part at 300 characters', () => {
    expect(gist(`${'a'.repeat(400)}\n${'b'.repeat(400)}`)).toBe(`${'a'.repeat(300)} … ${'b'.repeat(300)}`);
  });
});
