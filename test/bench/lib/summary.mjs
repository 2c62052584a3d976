// One row of the summary table `npm run bench` prints at the end (issue 17): each benchmark calls
// `summaryRow` for its goal lines; the row goes to stdout as one marked JSON line, which run.mjs
// collects from the benchmark's process (and a benchmark run alone just shows it).

/** The marker run.mjs looks for at the start of a line. */
export const SUMMARY_MARK = '@@bench-summary ';

/**
 * @typedef {object} SummaryRow
 * @property {string} id        stable key, the row's place in run.mjs's table (e.g. 'signups-p50')
 * @property {string} measure   what was measured, as the table shows it
 * @property {string} unit      'ms', 's', 'req/s', 'deliveries/s', '×' …
 * @property {number} now       this run's figure
 * @property {number} anchor    the anchor's figure, measured in the same run
 * @property {string} anchorLabel what the anchor is (e.g. 'COPY of the same rows')
 * @property {number} goal      the goal's bound
 * @property {'now' | 'ratio'} goalOn  whether the goal bounds `now` or `now / anchor`
 * @property {'lower' | 'higher'} better  which way is better (`now` ≤ goal or ≥ goal)
 * @property {number} [load]    the 1-minute load average when run.mjs received the row
 */

/** @param {SummaryRow} row @returns {boolean} whether the goal is met */
export function summaryRow(row) {
  console.log(`${SUMMARY_MARK}${JSON.stringify(row)}`);
  return goalMet(row);
}

/** @param {SummaryRow} row */
export function goalMet(row) {
  const value = row.goalOn === 'ratio' ? row.now / row.anchor : row.now;
  return row.better === 'lower' ? value <= row.goal : value >= row.goal;
}
