import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  readResumePoint,
  ResumeSaver,
  ResumeTracker,
  resumeKey,
  stateFileOf,
  writeResumePoint,
} from './listen-resume.js';

const unsettled = (id: string) => ({ id, type: 'member.created', url: 'http://localhost/h', last: '503' });

describe('ResumeTracker', () => {
  it('moves the point past a page only once every event of it is settled, whatever the order', () => {
    const tracker = new ResumeTracker({ cursor: 'c0' });
    tracker.addPage('c1', ['a', 'b']);
    tracker.addPage('c2', ['c']);
    tracker.acknowledge('c');
    tracker.acknowledge('b');
    expect(tracker.point()).toMatchObject({ cursor: 'c0', acknowledged: ['c', 'b'] });
    tracker.reject('a');
    // Behind the point the feed never shows those events again: their ids are dropped.
    expect(tracker.point()).toMatchObject({ cursor: 'c2', acknowledged: [], unsettled: [] });
  });

  it('an empty page moves the point at once when nothing is pending before it', () => {
    const tracker = new ResumeTracker({ cursor: 'c0' });
    tracker.addPage('c1', []);
    expect(tracker.point().cursor).toBe('c1');
  });

  it('never passes an event whose retries ran out; the acknowledged ones after it are kept by id', () => {
    const tracker = new ResumeTracker({ cursor: 'c0' });
    tracker.addPage('c1', ['a', 'b']);
    tracker.addPage('c2', ['c']);
    tracker.leaveUnsettled(unsettled('a'));
    tracker.acknowledge('b');
    tracker.acknowledge('c');
    expect(tracker.point()).toMatchObject({ cursor: 'c0', acknowledged: ['b', 'c'], unsettled: [unsettled('a')] });
  });

  it('resumed: skips what was acknowledged, forwards the unsettled event again, then moves on', () => {
    const tracker = new ResumeTracker({ cursor: 'c0', acknowledged: ['b', 'c'], unsettled: [unsettled('a')] });
    expect(['a', 'b', 'c', 'd'].map((id) => tracker.isAcknowledged(id))).toEqual([false, true, true, false]);
    // The feed from c0 again: a and b (page c1), c and d (page c2).
    tracker.addPage('c1', ['a'], ['b']);
    tracker.addPage('c2', ['d'], ['c']);
    expect(tracker.point()).toMatchObject({ cursor: 'c0', unsettled: [unsettled('a')] });
    tracker.acknowledge('a');
    expect(tracker.point()).toMatchObject({ cursor: 'c1', acknowledged: ['c'], unsettled: [] });
    tracker.acknowledge('d');
    expect(tracker.point()).toMatchObject({ cursor: 'c2', acknowledged: [] });
  });
});

describe('resume file', () => {
  async function configDir() {
    const dir = await mkdtemp(join(tmpdir(), 'loyalty-listen-resume-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    return join(dir, 'loyalty');
  }

  it('keeps one point per profile, API and organization, in a file only its owner can read', async () => {
    const dir = await configDir();
    const one = resumeKey('default', 'http://127.0.0.1:3000', undefined);
    const two = resumeKey('default', 'http://127.0.0.1:3000', 'org-b');
    expect(one).not.toBe(two);
    expect(await readResumePoint(dir, one)).toBeUndefined();
    const point = { cursor: '12.3', acknowledged: ['x'], unsettled: [], saved_at: '2026-11-24T10:00:00.000Z' };
    await writeResumePoint(dir, one, point);
    await writeResumePoint(dir, two, { ...point, cursor: '99.1' });
    expect(await readResumePoint(dir, one)).toEqual(point);
    expect((await readResumePoint(dir, two))?.cursor).toBe('99.1');
    expect((await stat(stateFileOf(dir))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o077).toBe(0);
    expect(JSON.parse(await readFile(stateFileOf(dir), 'utf8'))).toHaveProperty(['listen', one, 'cursor'], '12.3');
  });
});

describe('ResumeSaver', () => {
  it('writes one at a time and saves the changes made during a write right after it', async () => {
    let writes = 0;
    let release: () => void = () => undefined;
    const saver = new ResumeSaver(async () => {
      writes += 1;
      if (writes === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    saver.request();
    saver.request();
    saver.request();
    expect(writes).toBe(1);
    release();
    await saver.flush();
    // The first write, then one for everything asked during it (flush included).
    expect(writes).toBe(2);
    await saver.flush();
    expect(writes).toBe(3);
  });
});
