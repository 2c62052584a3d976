/**
 * The path serializer of every call: openapi-fetch's, except for a value that is exactly `.` or
 * `..`. encodeURIComponent leaves those as they are, and URL parsing (WHATWG, so `fetch` and
 * `Request`) then removes the segment: `/members/..` becomes `/`, another route. `%2E` does not
 * help: the parser reads `%2e` as a dot in a path segment too. Such a value is sent as `%252E`
 * (`%252E%252E`): the server decodes it to the text `%2E` (`%2E%2E`), no identifier it has, so the
 * route of the template answers (404 for an unknown member) and the call never reaches another
 * path. No request could carry a bare `.` or `..` segment.
 */
import { defaultPathSerializer } from 'openapi-fetch';

export function pathSerializer(pathname: string, params: Record<string, unknown>): string {
  let safe = params;
  for (const name in params) {
    const value = params[name];
    if (value === '.' || value === '..') safe = { ...safe, [name]: value.replaceAll('.', '%2E') };
  }
  return defaultPathSerializer(pathname, safe);
}
