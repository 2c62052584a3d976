import postgres from 'postgres';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;
/** A connection or a transaction: services take either, so callers choose the transaction. */
export type Db = Sql | Tx;

export function createPool(
  url: string,
  options: { max?: number; connection?: Record<string, string | number> } = {},
): Sql {
  return postgres(url, {
    ...unixSocketOf(url),
    max: options.max ?? 10,
    onnotice: () => {},
    // postgres.js waits before each new connection after failed ones, up to 20 s and shared by the
    // pool: with PostgreSQL down every query would wait that long (a hang, not a 503), and once it
    // is back the first ones too. A failed connection is retried after a tenth of a second instead;
    // clients wait Retry-After between their attempts.
    backoff: () => 0.1,
    // bigint counts (COUNT(*)) come back as numbers; our counts stay far below 2^53.
    types: { bigint: postgres.BigInt },
    transform: { undefined: null },
    connection: { application_name: 'loyalty-server', ...options.connection },
  });
}

/**
 * libpq's URL for a Unix socket, the directory percent-encoded as the host
 * (`postgres://user:pass@%2Fsocket%2Fdir:5432/db`, what the embedded database gives): pg and psql
 * read it, postgres.js would look the encoded text up as a host name, so it gets the directory.
 */
export function unixSocketOf(url: string): { host?: string } {
  const host = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?(%2F[^:/?#]*)/i.exec(url)?.[1];
  return host ? { host: decodeURIComponent(host) } : {};
}
