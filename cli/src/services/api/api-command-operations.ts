// `loyalty api`: which operation of openapi.yaml a method and a concrete path (`/members/3c9e…`)
// are, from the generated operation list. Pure: no SDK, no network (completion loads it too).
import { distance } from 'fastest-levenshtein';
import { usageError } from '../../errors.js';
import { OPERATIONS, type Operation } from '../../generated/operations.js';

export type { Operation };

export const API_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const segments = (path: string): string[] => path.split('/').slice(1);
const isParameter = (segment: string): boolean => /^\{[^}]+\}$/.test(segment);

/** Whether `path` fits `template`; the number of literal segments when it does (more is more specific). */
function fit(template: string, path: string): number | undefined {
  const want = segments(template);
  const have = segments(path);
  if (want.length !== have.length) return undefined;
  let literal = 0;
  for (const [i, segment] of want.entries()) {
    const given = have[i] ?? '';
    if (isParameter(segment)) {
      // `..` (or %2e%2e) would be resolved by the URL parser into another path than the one checked.
      if (given === '' || /^(\.|%2e){1,2}$/i.test(given)) return undefined;
    } else if (segment === given) literal += 1;
    else return undefined;
  }
  return literal;
}

/** The template with its parameters filled from `path` where it has a segment there, for distances. */
function filled(template: string, path: string): string {
  const have = segments(path);
  return `/${segments(template)
    .map((segment, i) => (isParameter(segment) && have[i] ? have[i] : segment))
    .join('/')}`;
}

/** The `count` operations closest to `METHOD path`, as `METHOD /template` lines. */
export function closestOperations(method: string, path: string, count = 3): string[] {
  const scored = OPERATIONS.map((operation) => ({
    operation,
    score: distance(path, filled(operation.path, path)) * 2 + (operation.method === method ? 0 : 1),
  }));
  scored.sort((a, b) => a.score - b.score);
  return scored.slice(0, count).map(({ operation }) => `${operation.method} ${operation.path}`);
}

/** The path without its query string and with a leading slash; the query string's parameters apart. */
export function splitPath(input: string): { path: string; query: URLSearchParams } {
  const at = input.indexOf('?');
  const raw = at === -1 ? input : input.slice(0, at);
  const query = new URLSearchParams(at === -1 ? '' : input.slice(at + 1));
  const path = raw.startsWith('/') ? raw : `/${raw}`;
  return { path, query };
}

/** The operation `METHOD path` is; a usage error with the closest operations when there is none. */
export function findOperation(methodInput: string, path: string): Operation {
  const method = methodInput.toUpperCase();
  if (!(API_METHODS as readonly string[]).includes(method))
    throw usageError(`Unknown method "${methodInput}": use one of ${API_METHODS.join(', ')}.`);
  const fitting = OPERATIONS.flatMap((operation) => {
    const literal = fit(operation.path, path);
    return literal === undefined ? [] : [{ operation, literal }];
  });
  const withMethod = fitting.filter(({ operation }) => operation.method === method);
  withMethod.sort((a, b) => b.literal - a.literal);
  const found = withMethod[0]?.operation;
  if (found) return found;
  const suggestions = closestOperations(method, path)
    .map((line) => `  ${line}`)
    .join('\n');
  if (fitting.length > 0) {
    const methods = [...new Set(fitting.map(({ operation }) => operation.method))].join(', ');
    throw usageError(
      `${path} has no ${method} operation in the API (it has ${methods}).`,
      `Closest operations:\n${suggestions}`,
    );
  }
  throw usageError(`${method} ${path} is not an operation of the API.`, `Closest operations:\n${suggestions}`);
}

/** Every path template, for shell completion of `loyalty api <method> <path>`. */
export const operationPaths = (): string[] => [...new Set(OPERATIONS.map((operation) => operation.path))];
