// `loyalty api <method> <path>`: the path is sent as written or not at all. The SDK puts it into a
// URL that undici parses as WHATWG URL does: backslashes become slashes, TABs and newlines vanish,
// `.` and `..` segments (also `%2e`) are resolved and `#` starts a fragment, so
// `/members/..\webhook-subscriptions\<id>` passes for DELETE /members/{uuid} and deletes a
// subscription (issue 25). Such a path is refused before the operation is looked up.
import { showControls } from '../../ui/controls.js';
import { usageError } from '../../errors.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: controls are what this refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Encoded separators (%2f, %5c), dots (%2e) and controls (%00–%1f, %7f, UTF-8 C1 %c2%80–%c2%9f). */
const ENCODED = /%(?:2f|5c|2e|[01][0-9a-f]|7f|c2%[89][0-9a-f])/i;

const decoded = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** Throws a usage error (exit 2) naming the path when it would reach another path than written. */
export function checkPathAsWritten(path: string): void {
  const refuse = (why: string) =>
    usageError(
      `The path ${showControls(JSON.stringify(path))} ${why}; nothing was sent.`,
      'Write the path as the API has it (e.g. /members/3c9e…), without backslashes, controls, encoded slashes or dots.',
    );
  if (CONTROL.test(path)) throw refuse('contains a control character');
  if (path.includes('\\')) throw refuse('contains a backslash (URL parsing reads it as a slash)');
  if (ENCODED.test(path)) throw refuse('contains an encoded separator, dot or control (%2f, %5c, %2e, %00…)');
  const resolved = new URL(path, 'http://loyalty.invalid').pathname;
  const written = path.split('/').map(decoded);
  const sent = resolved.split('/').map(decoded);
  if (written.length !== sent.length || written.some((segment, i) => segment !== sent[i]))
    throw refuse(`resolves to ${showControls(resolved)}, not the path as written`);
}
