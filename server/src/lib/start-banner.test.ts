import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoFixturesPath } from '../config.js';
import { createLogger, workerLoggerOf } from './logger.js';
import { startReport, type StartFacts } from './start-banner.js';

const embedded: StartFacts = {
  uri: 'http://127.0.0.1:3000',
  config: {
    databaseUrl: undefined,
    dataDir: '.loyalty/data',
    fixtures: demoFixturesPath,
    worker: true,
    sandbox: true,
    webhookAllowInsecure: false,
    apiProcesses: 1,
  },
  database: { version: '18.4', where: '/tmp/x:5432' },
};
const external: StartFacts = {
  ...embedded,
  config: { ...embedded.config, databaseUrl: 'postgres://loyalty@db:5432/loyalty', sandbox: false, worker: false },
  database: { version: '16.2', where: 'db:5432' },
};

describe('startReport (issue 27: a calm start in a terminal)', () => {
  it('not in a terminal: the stderr line and the listening line, as before, with the data directory absolute', () => {
    expect(startReport(embedded, false)).toEqual({
      err: [
        `loyalty: database: embedded PostgreSQL in ${path.resolve('.loyalty/data')}; fixtures: ${demoFixturesPath}; worker: on`,
      ],
      out: ['Loyalty reference server listening on http://127.0.0.1:3000'],
    });
    expect(startReport({ ...external, config: { ...external.config, apiProcesses: 2 } }, false).err).toEqual([
      `loyalty: database: DATABASE_URL; fixtures: ${demoFixturesPath}; worker: off; API processes: 2`,
    ]);
  });

  it('in a terminal: one block with the URLs, the absolute data directory, the database, the switches and how to stop', () => {
    expect(startReport(embedded, true)).toEqual({
      err: [],
      out: [
        'Loyalty reference server listening on http://127.0.0.1:3000',
        '  API docs           http://127.0.0.1:3000/docs',
        `  Data               ${path.resolve('.loyalty/data')}`,
        '  Database           embedded PostgreSQL 18.4',
        '  Fixtures           demo',
        '  Sandbox            on (/sandbox/*, Prefer: fault=…)',
        '  Insecure webhooks  off: https:// public URLs only (--webhook-allow-insecure)',
        'Ctrl-C to stop.',
      ],
    });
    const block = startReport(
      { ...external, config: { ...external.config, webhookAllowInsecure: true, fixtures: 'none' } },
      true,
    ).out;
    expect(block).toContain('  Database           PostgreSQL 16.2 at db:5432 (DATABASE_URL)');
    expect(block).toContain('  Sandbox            off');
    expect(block).toContain('  Insecure webhooks  on: http:// and local webhook URLs accepted');
    expect(block).toContain('  Worker             off: no webhooks or voucher jobs run here');
    expect(block).toContain('  Fixtures           none');
    expect(block.join('\n')).not.toMatch(/Data /);
  });
});

describe('createLogger, calm (a terminal at level info)', () => {
  const logged = (calm: boolean) => {
    const lines: { level: number; msg: string }[] = [];
    const logger = createLogger(
      { level: 'info', calm },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    workerLoggerOf(logger, 'background').scope({}).info('Worker connected and looking for jobs...');
    workerLoggerOf(logger, 'deliveries').scope({}).warn('a runner stopped');
    logger.child({ component: 'worker' }).info({ event: 'delivery_attempt' }, 'webhook delivery attempt');
    logger.info({ port: 3000 }, 'server started');
    logger.info({ method: 'GET', route: '/tags', status: 200 }, 'request completed');
    logger.error('a failure');
    logger.info('server stopped');
    return lines.map((line) => line.msg);
  };

  it('keeps access lines, warnings and errors, and leaves out the worker and start/stop lines at info', () => {
    expect(logged(true)).toEqual(['a runner stopped', 'request completed', 'a failure']);
  });

  it('otherwise writes every line', () => {
    expect(logged(false)).toHaveLength(7);
  });
});
