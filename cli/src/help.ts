// Examples at the end of every command's --help, in one format.

export function examples(...lines: Array<[command: string, what: string]>): string {
  const body = lines.map(([command, what]) => `  # ${what}\n  $ ${command}`).join('\n\n');
  return `\nExamples:\n${body}\n`;
}
