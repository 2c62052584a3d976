// Shared by the SDK overhead benches: calls run `concurrency` at a time, variants interleaved
// round by round, and the client's figures beside plain fetch's.

/** Runs `fn` `calls` times, `concurrency` at once; answers wall and process CPU time per call (µs). */
export async function timeCalls(fn, { calls, concurrency }) {
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) await fn();
    }),
  );
  const used = process.cpuUsage(cpu);
  return { wall: ((performance.now() - start) * 1000) / calls, cpu: (used.user + used.system) / calls };
}

/**
 * Warms every variant up once, then runs them `rounds` times, interleaved round by round so load
 * on the machine hits them alike. Answers the samples per variant name.
 */
export async function sampleVariants(variants, { rounds, calls, concurrency }) {
  const options = { calls, concurrency };
  for (const fn of Object.values(variants)) await timeCalls(fn, options);
  const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let round = 0; round < rounds; round++)
    for (const [name, fn] of Object.entries(variants)) samples[name].push(await timeCalls(fn, options));
  return samples;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Prints `<label>: wall …, ratio …; CPU …` for `<method> plain fetch` against `<method> client`;
 * answers the wall ratio of the medians and the median of the per-round ratios.
 */
export function compare(samples, method, label = method) {
  const plain = samples[`${method} plain fetch`];
  const sdk = samples[`${method} client`];
  const wall = [median(plain.map((s) => s.wall)), median(sdk.map((s) => s.wall))];
  const cpu = [median(plain.map((s) => s.cpu)), median(sdk.map((s) => s.cpu))];
  const ratio = wall[1] / wall[0];
  // Within a round both ran moments apart, so their ratio is less exposed to load that drifts between rounds.
  const perRound = median(sdk.map((s, i) => s.wall / plain[i].wall));
  const delta = cpu[1] - cpu[0];
  console.log(
    `${label}: wall ${wall[0].toFixed(0)} µs plain fetch, ${wall[1].toFixed(0)} µs client, ratio ${ratio.toFixed(3)} (median of per-round ratios ${perRound.toFixed(3)}); ` +
      `client-process CPU ${cpu[0].toFixed(0)} µs vs ${cpu[1].toFixed(0)} µs (ratio ${(cpu[1] / cpu[0]).toFixed(2)}, ${delta >= 0 ? '+' : '-'}${Math.abs(delta).toFixed(0)} µs)`,
  );
  return { ratio, perRound };
}
