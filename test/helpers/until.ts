type Falsy = false | 0 | '' | null | undefined;

/**
 * Polls `what` every `everyMs` until it answers something truthy, and returns that; throws
 * `timed out waiting` after `timeoutMs`.
 */
export async function until<T>(what: () => T | Falsy | Promise<T | Falsy>, timeoutMs = 8000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting (${timeoutMs} ms)`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
