// The anchor of the webhook delivery bench (issue 17): a bare loop of HTTP POSTs from this Node
// process, keep-alive through an undici Agent like the server's sender (server/src/lib/safe-fetch.ts),
// `inFlight` requests at a time, for `seconds`; no database, no signing per request, no log.
import { Agent, request } from 'undici';

/**
 * @param {{ url: string, body: string, headers: Record<string, string>, inFlight: number, seconds: number, connections?: number }} o
 * @returns {Promise<{ perSecond: number, seconds: number, ok: number, failed: number }>}
 */
export async function postLoop({ url, body, headers, inFlight, seconds, connections = inFlight }) {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections });
  let ok = 0;
  let failed = 0;
  const post = async () => {
    const response = await request(url, { method: 'POST', dispatcher: agent, body, headers });
    await response.body.dump();
    if (response.statusCode === 200) ok++;
    else failed++;
  };
  // Warm-up: the connections open, the code paths compile.
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: inFlight }, post));
  ok = 0;
  failed = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < until) await post();
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  const elapsed = (performance.now() - started) / 1000;
  await agent.close();
  return { perSecond: (ok + failed) / elapsed, seconds: elapsed, ok, failed };
}
