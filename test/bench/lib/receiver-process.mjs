// A benchmark's webhook receiver in a process of its own (so it takes no CPU from the process
// measured): the benchmark file forked with the argument `receiver`, which answers messages.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Forks `moduleUrl` (the calling benchmark's import.meta.url) with `receiver`, and waits for its
 * first message (e.g. `{ port }`). `ask(message)` sends a message and resolves with the answer.
 * @param {string} moduleUrl
 */
export async function forkReceiver(moduleUrl) {
  const child = fork(fileURLToPath(moduleUrl), ['receiver'], { stdio: 'inherit' });
  /** @param {unknown} [message] @returns {Promise<any>} */
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      if (message) child.send(/** @type {import('node:child_process').Serializable} */ (message));
    });
  const ready = await ask();
  return { ready, ask, kill: () => child.kill() };
}
