/**
 * HTML templates without a template engine: `html` escapes every interpolated value unless it is
 * markup made by `html` itself (or `trustedHtml`, for markup a library produced, such as the QR
 * code's SVG), so a brand called `<script>` is shown as text.
 */
const SAFE = Symbol('safe html');
export type SafeHtml = { readonly [SAFE]: true; readonly text: string };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** Markup that is already safe: made by `html`, or by a library that escapes what it writes. */
export const trustedHtml = (text: string): SafeHtml => ({ [SAFE]: true, text });

const isSafe = (value: unknown): value is SafeHtml =>
  typeof value === 'object' && value !== null && SAFE in value && (value as SafeHtml)[SAFE];

type Value = string | number | SafeHtml | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (isSafe(value)) return value.text;
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return trustedHtml(out);
}
