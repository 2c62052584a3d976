import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { TEST_SECRET_KEY } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { loadConfig, type Config } from '../config.js';
import { createMember } from '../services/members/members.js';
import { issuePassToMember } from '../services/passes/passes-issue.js';
import { queuePassPushes } from '../services/wallet/wallet-pushes.js';
import { startWorker, type WorkerRunner } from '../worker.js';

// Issue 28, part C: with the operator's Apple credentials a push goes to APNs. Here "APNs" is a local
// HTTP/2 endpoint over TLS that asks for a client certificate and records what it gets, so the request
// format is checked as APNs reads it: POST /3/device/<token>, apns-topic = the pass type id, body {}.
// The certificates are made by openssl for this run only.

const PASS_TYPE = 'pass.com.example.loyalty';
let dir: string;
let db: TestDatabase;
let worker: WorkerRunner;
let apns: http2.Http2SecureServer;
type Seen = { path: string; headers: http2.IncomingHttpHeaders; body: string; clientCn: string | undefined };
const seen: Seen[] = [];
/** What the endpoint answers per push token (default 200). */
const answers = new Map<string, { status: number; reason?: string }>();

function openssl(...args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}
function certificate(name: string, subject: string, ext?: string) {
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  );
  if (ext) writeFileSync(path.join(dir, `${name}.ext`), ext, { mode: 0o600 });
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-out',
    `${name}.pem`,
    ...(ext ? ['-extfile', `${name}.ext`] : []),
  );
}
const file = (name: string) => readFileSync(path.join(dir, name), 'utf8');

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'apns-test-'));
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=Test APNs CA',
  );
  certificate('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\n');
  certificate('pass', `/UID=${PASS_TYPE}/CN=Pass Type ID: ${PASS_TYPE}`);

  apns = http2.createSecureServer({
    key: file('server.key'),
    cert: file('server.pem'),
    ca: file('ca.pem'),
    requestCert: true,
    rejectUnauthorized: true,
  });
  apns.on('stream', (stream, headers) => {
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => {
      const peer = (stream.session?.socket as TLSSocket | undefined)?.getPeerCertificate();
      const pathText = String(headers[':path']);
      seen.push({ path: pathText, headers, body, clientCn: peer?.subject ? String(peer.subject.CN) : undefined });
      const answer = answers.get(decodeURIComponent(pathText.replace('/3/device/', ''))) ?? { status: 200 };
      stream.respond({ ':status': answer.status, 'apns-id': '8f4b5c2e-0000-4000-8000-000000000000' });
      stream.end(answer.reason ? JSON.stringify({ reason: answer.reason }) : undefined);
    });
  });
  await new Promise<void>((resolve) => apns.listen(0, '127.0.0.1', resolve));

  db = await createTestDatabase();
  const config: Config = {
    ...loadConfig({}),
    secretKey: TEST_SECRET_KEY,
    wallet: {
      apple: {
        cert: file('pass.pem'),
        key: path.join(dir, 'pass.key'), // a path works as well as the PEM text
        keyPassphrase: undefined,
        wwdr: file('ca.pem'),
        teamId: 'ABCDE12345',
        passTypeId: PASS_TYPE,
      },
      apnsUrl: `https://127.0.0.1:${(apns.address() as AddressInfo).port}`,
      google: undefined,
    },
  };
  worker = await startWorker({
    connectionString: db.url,
    sql: db.sql,
    config,
    only: ['wallet_push'],
    tasks: { apnsCa: file('ca.pem') },
    pollInterval: 100,
    log: () => {},
  });
});
afterAll(async () => {
  await worker?.stop();
  await db?.drop();
  await new Promise((resolve) => apns?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function registeredPass(pushTokens: string[]) {
  const scope = { organizationIds: ['org-acme'] };
  const pass = await db.sql.begin(async (tx) => {
    const { memberId } = await createMember(tx, scope, { brand_id: 'brand-acme', email: `apns${n++}@example.test` });
    return issuePassToMember(
      tx,
      scope,
      memberId,
      { brand_id: 'brand-acme', storecard_id: 'card-points' },
      'http://x.test',
    );
  });
  for (const [i, token] of pushTokens.entries())
    await db.sql`
      INSERT INTO wallet_registrations (organization_id, device_library_identifier, pass_type_identifier, pass_id, push_token)
      VALUES ('org-acme', ${`apns-device-${n}-${i}`}, ${PASS_TYPE}, ${pass.passId}, ${token})`;
  return pass;
}

describe('pushes to APNs', () => {
  it('sends POST /3/device/<token> with apns-topic = the pass type id and body {}, once per device, with the pass certificate', async () => {
    const tokens = ['a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90', 'second-device-token'];
    const pass = await registeredPass(tokens);
    const before = seen.length;
    await db.sql.begin((tx) => queuePassPushes(tx, [pass.passId]));
    const requests = await until(() => seen.length - before >= 2 && seen.slice(before));
    expect(requests.map((r) => r.path).sort()).toEqual(tokens.map((t) => `/3/device/${t}`).sort());
    for (const r of requests) {
      expect(r.headers[':method']).toBe('POST');
      expect(r.headers['apns-topic']).toBe(PASS_TYPE);
      expect(r.headers['apns-push-type']).toBe('background');
      expect(r.headers['apns-priority']).toBe('5');
      expect(JSON.parse(r.body)).toEqual({});
      expect(r.clientCn).toBe(`Pass Type ID: ${PASS_TYPE}`);
    }
  });

  it('forgets a push token APNs calls gone (410), and keeps the others', async () => {
    const pass = await registeredPass(['gone-token', 'kept-token']);
    answers.set('gone-token', { status: 410, reason: 'Unregistered' });
    const before = seen.length;
    await db.sql.begin((tx) => queuePassPushes(tx, [pass.passId]));
    await until(() => seen.length - before >= 2);
    const left = await until(async () => {
      const rows = await db.sql<{ push_token: string }[]>`
        SELECT push_token FROM wallet_registrations WHERE pass_id = ${pass.passId}`;
      return rows.length === 1 && rows;
    });
    expect(left).toEqual([{ push_token: 'kept-token' }]);
  });
});
