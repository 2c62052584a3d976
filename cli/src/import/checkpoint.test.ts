import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { CheckpointWriter, defaultCheckpointPath, readCheckpoint, type Checkpoint } from './checkpoint.js';

const state = (): Checkpoint => ({
  version: 1,
  source: { name: 'members.csv', sha256: 'f'.repeat(64), rows: 10 },
  api_url: 'http://127.0.0.1:3000',
  brand_id: 'brand-acme',
  batch_size: 2,
  batch_count: 5,
  validated_at: '2026-01-01T00:00:00.000Z',
  started_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  acknowledged: {},
});

describe('CheckpointWriter', () => {
  it('writes every acknowledged batch to disk, private to the user, without leaving temp files', async () => {
    const dir = await tempConfigHome();
    const path = join(dir, 'imports', 'x.json');
    const writer = new CheckpointWriter(path, state());
    await Promise.all([
      writer.acknowledge(0, { new: 2, found: 0, rejected: [] }),
      writer.acknowledge(3, { new: 1, found: 0, rejected: [{ line: 9, error: 'rejected by the API: bad' }] }),
    ]);
    const saved = await readCheckpoint(path);
    expect(Object.keys(saved!.acknowledged).sort()).toEqual(['0', '3']);
    expect(saved!.acknowledged['3']!.rejected).toEqual([{ line: 9, error: 'rejected by the API: bad' }]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, 'imports'))).toEqual(['x.json']);
    await writer.remove();
    expect(await readCheckpoint(path)).toBeUndefined();
  });

  it('stays 0600 when it replaces a wider checkpoint or a stale temp file of an earlier process with the same pid', async () => {
    const dir = await tempConfigHome();
    const path = join(dir, 'x.json');
    await writeFile(path, JSON.stringify(state()));
    await chmod(path, 0o644);
    await writeFile(`${path}.${process.pid}.tmp`, 'left over');
    await chmod(`${path}.${process.pid}.tmp`, 0o644);
    await new CheckpointWriter(path, state()).acknowledge(0, { new: 1, found: 0, rejected: [] });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(Object.keys((await readCheckpoint(path))!.acknowledged)).toEqual(['0']);
  });

  it('reports a damaged checkpoint with a way out', async () => {
    const dir = await tempConfigHome();
    const path = join(dir, 'x.json');
    await writeFile(path, '{"version":1,"acknowl');
    await expect(readCheckpoint(path)).rejects.toThrow(/damaged/);
  });

  it('names the checkpoint after API, brand and file content', () => {
    const key = { sha256: 'a'.repeat(64), brandId: 'brand-acme', apiUrl: 'http://127.0.0.1:3000' };
    const path = defaultCheckpointPath('/cfg', key);
    expect(path).toMatch(/^\/cfg\/imports\/[0-9a-f]{32}\.json$/);
    expect(defaultCheckpointPath('/cfg', { ...key, brandId: 'brand-globex' })).not.toBe(path);
    expect(defaultCheckpointPath('/cfg', key)).toBe(path);
  });

  it('keeps another kind of import of the same file apart, and the members import on its key of before', () => {
    const key = { sha256: 'a'.repeat(64), brandId: 'brand-acme', apiUrl: 'http://127.0.0.1:3000' };
    // The key members imports had before kinds existed: a checkpoint written then is still found.
    expect(defaultCheckpointPath('/cfg', key)).toBe('/cfg/imports/5e2529e9fddefc3b764f9a097d3772de.json');
    expect(defaultCheckpointPath('/cfg', { ...key, kind: 'points-set' })).not.toBe(defaultCheckpointPath('/cfg', key));
    expect(defaultCheckpointPath('/cfg', { ...key, kind: 'points-set' })).not.toBe(
      defaultCheckpointPath('/cfg', { ...key, kind: 'points-add' }),
    );
  });

  it('keeps the file readable as JSON after every write', async () => {
    const dir = await tempConfigHome();
    const path = join(dir, 'x.json');
    const writer = new CheckpointWriter(path, state());
    for (let i = 0; i < 5; i++) {
      await writer.acknowledge(i, { new: 1, found: 1, rejected: [] });
      expect(Object.keys(JSON.parse(await readFile(path, 'utf8')).acknowledged)).toHaveLength(i + 1);
    }
  });
});
