import { describe, expect, it } from 'vitest';
import { createSubscriptionGate, subscriptionFlag } from './subscription-gate.js';

describe('createSubscriptionGate', () => {
  it('admits up to the cap per subscription, forbids the full ones, and frees slots once', () => {
    const gate = createSubscriptionGate(2);
    const a1 = gate.enter('a')!;
    const a2 = gate.enter('a')!;
    const b1 = gate.enter('b')!;
    expect(gate.enter('a')).toBeNull();
    expect(gate.forbiddenFlags()).toEqual([subscriptionFlag('a')]);
    a1();
    a1(); // a second call gives nothing back twice
    expect(gate.forbiddenFlags()).toBeNull();
    const a3 = gate.enter('a')!;
    expect(gate.enter('a')).toBeNull();
    a2();
    a3();
    b1();
    expect(gate.forbiddenFlags()).toBeNull();
    expect(gate.enter('a')).not.toBeNull();
  });
});
