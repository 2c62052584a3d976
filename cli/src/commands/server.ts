import { Command } from 'commander';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { parseDatabaseUrlFlag } from '../secrets.js';
import type { ServerOptions } from '../services/server/server.js';

export function serverCommand(): Command {
  return new Command('server')
    .description('Start the reference server (the same as `npm start`); stops cleanly on Ctrl-C')
    .option('--port <port>', 'HTTP port, 0 for a free one (PORT; default 3000)')
    .option('--host <address>', 'bind address (HOST; default 127.0.0.1)')
    .option(
      '--database-url <url>',
      'use this PostgreSQL instead of the embedded one (DATABASE_URL); no password in it: set DATABASE_URL or PGPASSWORD for that',
      parseDatabaseUrlFlag,
    )
    .option(
      '--data-dir <dir>',
      'embedded PostgreSQL data directory (LOYALTY_DATA_DIR; default: $XDG_DATA_HOME/loyalty or ~/.local/share/loyalty when installed with npm; in the repository, the nearest .loyalty/data from this folder up, or a new one here)',
    )
    .option(
      '--pg-port <port>',
      'port of the embedded PostgreSQL (LOYALTY_PG_PORT; default 5432, which on its private Unix socket only names the socket file; on Windows a free TCP port)',
    )
    .option(
      '--fixtures <file>',
      'fixture file loaded at start, or "none" (LOYALTY_FIXTURES; default: the demo fixtures shipped with the server)',
    )
    .option('--processes <n>', 'API processes sharing the port, to use every core (LOYALTY_API_PROCESSES; default 1)')
    .option('--no-worker', 'API only; run the background worker elsewhere (LOYALTY_WORKER=off)')
    .option(
      '--webhook-allow-insecure',
      'accept http:// and local webhook URLs, for development (LOYALTY_WEBHOOK_ALLOW_INSECURE=1)',
    )
    .option(
      '--webhook-retry-delays <seconds>',
      'comma-separated delays between delivery attempts (LOYALTY_WEBHOOK_RETRY_DELAYS)',
    )
    .option('--webhook-timeout-ms <ms>', 'acknowledgement time per delivery attempt (LOYALTY_WEBHOOK_TIMEOUT_MS)')
    .option('--rate-limit-token <n>', 'requests per minute per token (LOYALTY_RATE_LIMIT_TOKEN; default 600)')
    .option('--rate-limit-ip <n>', 'requests per minute per IP without a token (LOYALTY_RATE_LIMIT_IP; default 60)')
    .addHelpText(
      'after',
      examples(
        [
          'loyalty server',
          'embedded PostgreSQL (data directory printed at start), demo fixtures, http://127.0.0.1:3000',
        ],
        ['loyalty server --port 0 --data-dir /tmp/loyalty-test --fixtures none', 'a throwaway server on a free port'],
        [
          'loyalty server --webhook-allow-insecure --webhook-retry-delays 1,2,5',
          'local webhook receivers, fast retries',
        ],
        [
          'loyalty server --database-url postgres://loyalty@db/loyalty --no-worker',
          'API only, against an existing PostgreSQL',
        ],
      ),
    )
    .action(async (options: ServerOptions, command: Command) => {
      await (await import('../services/server/server.js')).runServer(await contextOf(command), options);
    });
}
