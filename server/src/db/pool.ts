import postgres from 'postgres';

export type Sql = postgres.Sql<{}>;
export type Tx = postgres.TransactionSql<{}>;
/** A connection or a transaction: services take either, so callers choose the transaction. */
export type Db = Sql | Tx;

export function createPool(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // bigint counts (COUNT(*)) come back as numbers; our counts stay far below 2^53.
    types: { bigint: postgres.BigInt },
    transform: { undefined: null },
    connection: { application_name: 'loyalty-server' },
  });
}
