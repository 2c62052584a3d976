// Everything a command touches outside itself, so tests can run the whole program in-process.
import type { Command } from 'commander';

export interface Runtime {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Aborted on Ctrl-C: commands stop, save what they can, and the run exits with 130. */
  signal: AbortSignal;
  cwd: string;
}

const runtimes = new WeakMap<Command, Runtime>();

export function attachRuntime(program: Command, runtime: Runtime): void {
  runtimes.set(program, runtime);
}

export function runtimeOf(command: Command): Runtime {
  let root = command;
  while (root.parent) root = root.parent;
  const runtime = runtimes.get(root);
  if (!runtime) throw new Error('no runtime attached to the program');
  return runtime;
}

/** The words of this run as typed after `loyalty`: rawArgs, set by commander's parse() (not in its type declarations). */
export function commandLineOf(command: Command): readonly string[] {
  let root = command;
  while (root.parent) root = root.parent;
  return (root as { rawArgs?: string[] }).rawArgs ?? [];
}
