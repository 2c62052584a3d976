import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findProjectDataDir, SERVER_NODE_OPTIONS, serverEntryPoint, serverEnvironment } from './server.js';

describe('loyalty server', () => {
  it('turns flags into the environment variables of the contract', () => {
    expect(
      serverEnvironment({
        port: '0',
        host: '0.0.0.0',
        databaseUrl: 'postgres://db/x',
        dataDir: '/tmp/d',
        pgPort: '5555',
        fixtures: 'none',
        worker: false,
        webhookAllowInsecure: true,
        webhookRetryDelays: '1,2',
        webhookTimeoutMs: '500',
        rateLimitToken: '10000',
        rateLimitIp: '100',
      }),
    ).toEqual({
      PORT: '0',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://db/x',
      LOYALTY_DATA_DIR: '/tmp/d',
      LOYALTY_PG_PORT: '5555',
      LOYALTY_FIXTURES: 'none',
      LOYALTY_WORKER: 'off',
      LOYALTY_WEBHOOK_ALLOW_INSECURE: '1',
      LOYALTY_WEBHOOK_RETRY_DELAYS: '1,2',
      LOYALTY_WEBHOOK_TIMEOUT_MS: '500',
      LOYALTY_RATE_LIMIT_TOKEN: '10000',
      LOYALTY_RATE_LIMIT_IP: '100',
    });
    expect(serverEnvironment({ worker: true })).toEqual({});
  });

  it('finds the server package of this repository', () => {
    const entry = serverEntryPoint();
    expect(entry).toMatch(/server\/dist\/start\.js$/);
    expect(existsSync(entry.replace(/dist\/start\.js$/, 'package.json'))).toBe(true);
  });
});

describe('SERVER_NODE_OPTIONS', () => {
  it('are the options `npm start` runs the server with, so both servers behave alike', () => {
    const root = new URL('../../../../package.json', import.meta.url);
    const scripts = (JSON.parse(readFileSync(root, 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(`exec node ${SERVER_NODE_OPTIONS.join(' ')} server/dist/start.js`);
    expect(scripts.worker).toBe(`exec node ${SERVER_NODE_OPTIONS.join(' ')} server/dist/worker-main.js`);
  });
});

describe('findProjectDataDir (issue 27: `loyalty server` from a subdirectory)', () => {
  it("finds the project's .loyalty/data from the project and any folder below it, as git finds .git", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'loyalty-find-data-'));
    try {
      const project = path.join(dir, 'project');
      mkdirSync(path.join(project, '.loyalty', 'data'), { recursive: true });
      mkdirSync(path.join(project, 'fixtures', 'deeper'), { recursive: true });
      const data = path.join(project, '.loyalty', 'data');
      expect(findProjectDataDir(project)).toBe(data);
      expect(findProjectDataDir(path.join(project, 'fixtures', 'deeper'))).toBe(data);
      expect(findProjectDataDir(path.relative(process.cwd(), path.join(project, 'fixtures')))).toBe(data); // absolute
      // The nearest one wins: a subproject with a database of its own.
      mkdirSync(path.join(project, 'fixtures', '.loyalty', 'data'), { recursive: true });
      expect(findProjectDataDir(path.join(project, 'fixtures', 'deeper'))).toBe(
        path.join(project, 'fixtures', '.loyalty', 'data'),
      );
      // Nothing in the folder or above (the temp directory's parents hold none on a test machine).
      expect(findProjectDataDir(dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
