import { describe, expect, it } from 'vitest';
import { createDatabaseOutage, isDatabaseUnavailable } from './outage.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
  code: 'ECONNREFUSED',
  syscall: 'connect',
});

describe('isDatabaseUnavailable', () => {
  it('is true for a database that cannot be reached or is shutting down, false for a failed query', () => {
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable({ code: 'ENOENT', syscall: 'connect' })).toBe(true);
    expect(isDatabaseUnavailable({ code: 'CONNECTION_CLOSED' })).toBe(true);
    expect(isDatabaseUnavailable({ code: '57P01' })).toBe(true);
    expect(isDatabaseUnavailable({ code: '08006' })).toBe(true);
    expect(isDatabaseUnavailable({ code: '23505' })).toBe(false);
    expect(isDatabaseUnavailable({ code: 'ENOENT', syscall: 'open' })).toBe(false);
    expect(isDatabaseUnavailable(new Error('x'))).toBe(false);
  });
});

describe('createDatabaseOutage', () => {
  it('logs an outage once however many requests fail, probes until the database answers, then logs that it is back', async () => {
    const lines: string[] = [];
    const outage = createDatabaseOutage((line) => lines.push(line), 20);
    let answers = false;
    let probes = 0;
    const probe = async () => {
      probes++;
      if (!answers) throw refused;
    };
    for (let i = 0; i < 5; i++) outage.report(refused, probe);
    expect(outage.down).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(probes).toBeGreaterThan(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/database unavailable \(connect ECONNREFUSED 127\.0\.0\.1:1\)/);
    answers = true;
    await new Promise((r) => setTimeout(r, 60));
    expect(outage.down).toBe(false);
    expect(lines).toEqual([expect.stringMatching(/unavailable/), expect.stringMatching(/reachable again/)]);
    outage.report(refused, probe); // a second outage is logged again
    expect(lines).toHaveLength(3);
    outage.stop();
  });
});
