// One door for the outbox (issue 26): only outbox.ts writes the events table and queues their
// fan-out. A second writer, a copied `add_job` of the fan-out task or the task's name spelled out
// anywhere else in the server's source fails here; use outbox.ts (recordEvents, recordedAndQueued,
// recorded + queueFanOut, FAN_OUT_EVENTS) instead.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAN_OUT_EVENTS } from './outbox.js';

const src = fileURLToPath(new URL('../../', import.meta.url));
const DOOR = path.join('services', 'platform', 'outbox.ts');

/** The server's source files (tests aside), relative to server/src. */
const sources = (readdirSync(src, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
  .sort();

const SECOND_DOORS: [string, RegExp][] = [
  ['writes the events table', /\b(INSERT\s+INTO|COPY)\s+(public\.)?"?events"?[\s(]/i],
  ['names the fan-out task', new RegExp(`['"]${FAN_OUT_EVENTS}['"]`)],
  ['queues a job with event ids', /add_job\([^;]*event_ids/is],
];

/** Each file but the door that matches one of the patterns, with what it does. */
function secondDoors(files: { name: string; text: string }[]) {
  return files.flatMap(({ name, text }) =>
    name === DOOR ? [] : SECOND_DOORS.filter(([, re]) => re.test(text)).map(([what]) => `${name} ${what}`),
  );
}

describe('the outbox has one door', () => {
  it('scans the server source, the door included', () => {
    expect(sources).toContain(DOOR);
    expect(sources.length).toBeGreaterThan(50);
    const door = readFileSync(path.join(src, DOOR), 'utf8');
    for (const [, re] of SECOND_DOORS.filter(([what]) => what !== 'names the fan-out task')) expect(door).toMatch(re);
  });

  it('no other file of server/src writes events or queues their fan-out', () => {
    const files = sources.map((name) => ({ name, text: readFileSync(path.join(src, name), 'utf8') }));
    expect(secondDoors(files)).toEqual([]);
  });

  it('would see a second door of each kind', () => {
    const copies = [
      { name: 'services/a.ts', text: 'tx`INSERT INTO events (organization_id, type, data) SELECT …`' },
      { name: 'services/b.ts', text: "const TASKS = ['deliver_webhook', 'fan_out_events'];" },
      {
        name: 'services/c.ts',
        text: "tx`SELECT graphile_worker.add_job($1,\n json_build_object('event_ids', $2::uuid[]))`",
      },
    ];
    expect(secondDoors(copies)).toEqual([
      'services/a.ts writes the events table',
      'services/b.ts names the fan-out task',
      'services/c.ts queues a job with event ids',
    ]);
  });
});
