import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { dataDirFailure, describeStartupFailure, StartupError } from './startup-errors.js';

const systemError = (props: Record<string, unknown>) => Object.assign(new Error(String(props.code)), props);

describe('describeStartupFailure', () => {
  it('never says "undefined": a rejection without a value is named as one', () => {
    expect(describeStartupFailure(undefined)).not.toMatch(/undefined/);
    expect(describeStartupFailure(undefined)).toMatch(/^start-up failed: an error without a message .*LOYALTY_DEBUG=1/);
    expect(describeStartupFailure(new Error(''))).not.toMatch(/undefined/);
  });

  it('is one line, also for a message of several', () => {
    expect(describeStartupFailure(new StartupError('first\n  second'))).toBe('first second');
    expect(describeStartupFailure(new ConfigError('Invalid configuration: "PORT" must be a number'))).toBe(
      'Invalid configuration: "PORT" must be a number',
    );
  });

  it('names a port in use and the variable that fixes it', () => {
    const line = describeStartupFailure(
      systemError({ code: 'EADDRINUSE', syscall: 'listen', address: '127.0.0.1', port: 3000 }),
    );
    expect(line).toBe(
      'port 3000 on 127.0.0.1 is already in use (another server?): stop that process, or set PORT to a free port (PORT=0 picks one).',
    );
  });
});

describe('dataDirFailure', () => {
  it('names the data directory, the cause and LOYALTY_DATA_DIR for a filesystem error, and keeps the original as its cause', () => {
    const cause = systemError({ code: 'EROFS', path: '/ro/data', syscall: 'mkdir' });
    const failure = dataDirFailure('/ro/data', cause) as StartupError;
    expect(failure).toBeInstanceOf(StartupError);
    expect(failure.message).toBe(
      'cannot create or write the data directory /ro/data (EROFS): it is on a read-only filesystem. Set LOYALTY_DATA_DIR to a writable directory (or use DATABASE_URL).',
    );
    expect(failure.cause).toBe(cause);
  });

  it('leaves other errors as they are', () => {
    const other = new Error('something else');
    expect(dataDirFailure('/data', other)).toBe(other);
  });
});
