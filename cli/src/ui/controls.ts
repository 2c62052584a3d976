// Text from the API (a tag name, an error message, a header) may carry terminal escape sequences:
// ESC[2J clears the screen, OSC 8 makes a link say something else than where it goes, a C1 CSI
// (U+009B) does what ESC[ does. Every human output path shows such characters escaped instead
// (`\x1b`, `\u009b`), as `--json` already does for C0: cli/src/output.ts (tables, results,
// messages) and the line reporter go through here.

// biome-ignore lint/suspicious/noControlCharactersInRegex: controls are what this escapes
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (char: string): string => {
  const code = char.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * `text` with its C0 controls (but newline and TAB), DEL, C1 controls and the bidirectional
 * overrides written as escapes: `\x1b`, `\u009b`, `\u202e`. Safe to print to a terminal.
 */
export const showControls = (text: string): string => text.replace(CONTROLS, escaped);

// biome-ignore lint/suspicious/noControlCharactersInRegex: the palette's own sequences start with ESC
const PAINT = /(\u001b\[(?:1|2|22|31|32|33|36|39)m)/;

/**
 * showControls for text the CLI has painted itself (output.ts's palette): those colour sequences
 * stay, every other control is escaped. Text from the API is escaped before it is painted (table
 * cells), so the sequences kept here can only colour, never move, clear, link or retitle.
 */
export const showControlsKeepingPaint = (text: string): string =>
  text
    .split(PAINT)
    .map((part, i) => (i % 2 === 1 ? part : showControls(part)))
    .join('');
