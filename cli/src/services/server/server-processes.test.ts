import { describe, expect, it } from 'vitest';
import { serverEnvironment } from './server.js';

describe('loyalty server --processes', () => {
  it('maps to LOYALTY_API_PROCESSES', () => {
    expect(serverEnvironment({ worker: true, processes: '2' })).toEqual({ LOYALTY_API_PROCESSES: '2' });
    expect(serverEnvironment({ worker: true })).not.toHaveProperty('LOYALTY_API_PROCESSES');
  });
});
