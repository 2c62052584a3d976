import path from 'node:path';
import type { Config } from '../config.js';
import { demoFixturesPath } from '../config.js';

/** What a started server says of itself. */
export type StartFacts = {
  uri: string;
  config: Pick<
    Config,
    'databaseUrl' | 'dataDir' | 'fixtures' | 'worker' | 'sandbox' | 'webhookAllowInsecure' | 'apiProcesses'
  >;
  /** The database's `server_version`; `where`: host:port of DATABASE_URL (never its password). */
  database: { version: string; where: string };
};

/** The line tests, benches and the CLI wait for: the start prints the base URL when it is ready (docs/server.md, "Starting"). */
export const listeningLine = (uri: string): string => `Loyalty reference server listening on ${uri}`;

/**
 * What a started server prints. Not in a terminal, as always: one `loyalty: database: …` line on
 * stderr and the listening line on stdout (others parse them). In a terminal, one short block on
 * stdout: the URLs, the data directory as an absolute path, the database, the switches a developer
 * must know of (sandbox, insecure webhook URLs), and how to stop.
 */
export function startReport(
  { uri, config, database }: StartFacts,
  terminal: boolean,
): { out: string[]; err: string[] } {
  const dataDir = path.resolve(config.dataDir);
  if (!terminal) {
    const where = config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${dataDir}`;
    const processes = config.apiProcesses > 1 ? `; API processes: ${config.apiProcesses}` : '';
    return {
      err: [
        `loyalty: database: ${where}; fixtures: ${config.fixtures}; worker: ${config.worker ? 'on' : 'off'}${processes}`,
      ],
      out: [listeningLine(uri)],
    };
  }
  const fixtures =
    config.fixtures === 'none'
      ? 'none'
      : path.resolve(config.fixtures) === demoFixturesPath
        ? 'demo'
        : path.resolve(config.fixtures);
  const rows: [string, string][] = [
    ['API docs', `${uri}/docs`],
    ...(config.databaseUrl
      ? [['Database', `PostgreSQL ${database.version} at ${database.where} (DATABASE_URL)`] as [string, string]]
      : [
          ['Data', dataDir] as [string, string],
          ['Database', `embedded PostgreSQL ${database.version}`] as [string, string],
        ]),
    ['Fixtures', fixtures],
    ['Sandbox', config.sandbox ? 'on (/sandbox/*, Prefer: fault=…)' : 'off'],
    [
      'Insecure webhooks',
      config.webhookAllowInsecure
        ? 'on: http:// and local webhook URLs accepted'
        : 'off: https:// public URLs only (--webhook-allow-insecure)',
    ],
    ...(config.worker ? [] : [['Worker', 'off: no webhooks or voucher jobs run here'] as [string, string]]),
    ...(config.apiProcesses > 1 ? [['API processes', String(config.apiProcesses)] as [string, string]] : []),
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return {
    out: [listeningLine(uri), ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`), 'Ctrl-C to stop.'],
    err: [],
  };
}
