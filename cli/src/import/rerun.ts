// The command that continues an interrupted import: the words of this run as typed (its file,
// --map, --storecard, --brand, --checkpoint…), without --resume or --restart, then --resume.
// Each word is quoted for a POSIX shell when it needs it, so the line can be pasted as it is.

const PLAIN = /^[\w@%+=:,./-]+$/;

export const shellWord = (word: string): string => (PLAIN.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

export function continueCommand(words: readonly string[]): string {
  const kept = words.filter((word) => word !== '--resume' && word !== '--restart');
  return ['loyalty', ...kept, '--resume'].map(shellWord).join(' ');
}
