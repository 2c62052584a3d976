// Progress goes to stderr: a live ink view when a person is watching (stderr is a TTY and
// this is not CI), otherwise one plain line at a steady pace and a last line at the end, so
// logs of scripts and CI stay readable. ink and React are loaded only here, on demand.
import type { ReactElement } from 'react';
import { liveView } from './live.js';
import { showControlsKeepingPaint } from './controls.js';

export interface ProgressReporter<State> {
  update(state: State): void;
  /** Shows the final state and releases the terminal. */
  finish(state: State): Promise<void>;
}

export interface ReporterStream {
  isTTY?: boolean;
  write(chunk: string): boolean;
}

const CI_VARIABLES = [
  'CI',
  'CONTINUOUS_INTEGRATION',
  'BUILD_NUMBER',
  'GITHUB_ACTIONS',
  'GITLAB_CI',
  'BUILDKITE',
  'TF_BUILD',
];

export function isCi(env: NodeJS.ProcessEnv): boolean {
  return CI_VARIABLES.some(
    (name) => env[name] !== undefined && env[name] !== '' && env[name] !== 'false' && env[name] !== '0',
  );
}

export function wantsLiveView(stream: ReporterStream, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !isCi(env) && env.TERM !== 'dumb';
}

export function lineReporter<State>(
  stream: ReporterStream,
  line: (state: State, now: number) => string,
  intervalMs = 2000,
): ProgressReporter<State> {
  let latest: State | undefined;
  let printed: string | undefined;
  const print = (): void => {
    if (latest === undefined) return;
    const text = line(latest, Date.now());
    if (text === printed) return;
    printed = text;
    stream.write(`${showControlsKeepingPaint(text)}\n`);
  };
  const timer = setInterval(print, intervalMs);
  timer.unref();
  return {
    update(state) {
      const first = latest === undefined;
      latest = state;
      if (first) print();
    },
    async finish(state) {
      clearInterval(timer);
      latest = state;
      print();
    },
  };
}

export async function inkReporter<State>(
  stream: ReporterStream,
  view: (state: State, now: number) => ReactElement,
  initial: State,
): Promise<ProgressReporter<State>> {
  const { render } = await import('ink');
  let latest = initial;
  liveView.active = true;
  const instance = render(view(latest, Date.now()), {
    stdout: stream as NodeJS.WriteStream,
    patchConsole: false,
    exitOnCtrlC: false,
  });
  // Rate and ETA change with time even when no new state arrives.
  const timer = setInterval(() => instance.rerender(view(latest, Date.now())), 250);
  timer.unref();
  return {
    update(state) {
      latest = state;
      instance.rerender(view(latest, Date.now()));
    },
    async finish(state) {
      clearInterval(timer);
      latest = state;
      instance.rerender(view(latest, Date.now()));
      instance.unmount();
      await instance.waitUntilExit().catch(() => undefined);
      liveView.active = false;
    },
  };
}
