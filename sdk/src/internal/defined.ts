/** The value, or an error that says an invariant broke: for what the code knows is there but the types cannot. */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`Internal error: ${what} is missing`);
  return value;
}
