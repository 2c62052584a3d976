/**
 * Request headers: a `Headers`, or (for calls no middleware sees) a plain record whose names are
 * lower case and whose values are valid, which fetch takes without a `Headers` of its own.
 */
export type HeaderBag = Headers | Record<string, string>;

export const hasHeader = (headers: HeaderBag, name: string): boolean =>
  headers instanceof Headers ? headers.has(name) : name in headers;

export function setHeader(headers: HeaderBag, name: string, value: string): void {
  if (headers instanceof Headers) headers.set(name, value);
  else headers[name] = value;
}
