import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('LOYALTY_API_PROCESSES', () => {
  it('defaults to 1 and takes an integer from 1 to 64', () => {
    expect(loadConfig({}).apiProcesses).toBe(1);
    expect(loadConfig({ LOYALTY_API_PROCESSES: '' }).apiProcesses).toBe(1);
    expect(loadConfig({ LOYALTY_API_PROCESSES: '4' }).apiProcesses).toBe(4);
    for (const bad of ['0', '65', '1.5', 'two'])
      expect(() => loadConfig({ LOYALTY_API_PROCESSES: bad }), bad).toThrow(ConfigError);
    expect(() => loadConfig({ LOYALTY_API_PROCESSES: '0' })).toThrow(/LOYALTY_API_PROCESSES/);
  });
});
