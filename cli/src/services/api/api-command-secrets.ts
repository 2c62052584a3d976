// `loyalty api`: a secret never travels as a value on the command line, where every local user
// reads it in the process list and the shell keeps it in its history (as `--client-secret` and
// `--token` are refused). A secret-named field (client_secret, password, api_key, …: SECRET_NAME,
// the list the other flags are checked against) is read from a file or stdin with `-F name=@file`
// / `-F name=@-`, or comes in the --input body; an Authorization header from --token-file.
import { SECRET_NAME, secretOnArgv } from '../../secrets.js';

const FIELD_WAYS = (key: string) =>
  `-F ${key}=@<file> (-F ${key}=@- reads stdin) or a request body from --input <file>`;
const HEADER = /^(authorization|proxy-authorization|cookie)$/i;

/** The names a field key is made of: `meta[api_key][]` → meta, api_key. */
const namesOf = (key: string): string[] => key.split(/[[\]]+/).filter((name) => name !== '');

/**
 * Throws the usage error of the other secret flags (exit 2, before anything is read or sent) for
 * a secret-named `--field`/`--raw-field` given a value on argv, a secret-named parameter in the
 * path's query string, or a credential header.
 */
export function refuseSecretsOnArgv(input: {
  typed: readonly string[];
  raw: readonly string[];
  query: URLSearchParams;
  headers: readonly string[];
}): void {
  const key = (pair: string) => pair.slice(0, Math.max(0, pair.indexOf('=')));
  for (const [flag, pairs] of [
    ['--field', input.typed],
    ['--raw-field', input.raw],
  ] as const) {
    for (const pair of pairs) {
      const name = key(pair);
      const fromFile = flag === '--field' && pair.slice(name.length + 1).startsWith('@');
      if (!fromFile && namesOf(name).some((part) => SECRET_NAME.test(part)))
        throw secretOnArgv(`${flag} ${name}`, 'secret', FIELD_WAYS(name));
    }
  }
  for (const name of input.query.keys())
    if (SECRET_NAME.test(name)) throw secretOnArgv(`The path's query parameter ${name}`, 'secret', FIELD_WAYS(name));
  for (const line of input.headers) {
    const name = line.slice(0, Math.max(0, line.indexOf(':'))).trim();
    if (HEADER.test(name) || SECRET_NAME.test(name))
      throw secretOnArgv(
        `--header ${name}`,
        'credential',
        '--token-file <path> ("-" reads stdin), the LOYALTY_TOKEN environment variable, or a profile (`loyalty login`)',
      );
  }
}
