// End to end: `loyalty webhooks verify` on a delivery the real server sent to a local receiver,
// and `loyalty webhooks listen --forward-to` re-delivering the event feed, signed, to another one.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

type Captured = { path: string; body: Buffer; headers: IncomingHttpHeaders; rawHeaders: string[] };

/** A receiver on 127.0.0.1 that keeps every request's exact body bytes and headers. */
async function receiver(): Promise<{
  url: string;
  requests: Captured[];
  next: () => Promise<Captured>;
  close: () => Promise<void>;
}> {
  const requests: Captured[] = [];
  const waiting: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        body: Buffer.concat(chunks),
        headers: req.headers,
        rawHeaders: req.rawHeaders,
      });
      res.writeHead(204).end();
      for (const wake of waiting.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let taken = 0;
  const next = async (): Promise<Captured> => {
    const deadline = Date.now() + 20_000;
    while (requests.length <= taken) {
      if (Date.now() > deadline) throw new Error('no request reached the receiver within 20 s');
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, 250);
      });
    }
    return requests[taken++]!;
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    next,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let live: LiveServer;
let cli: CliSandbox;
let token: string;

beforeAll(async () => {
  live = await startLiveServer();
  cli = await cliSandbox(live.url);
  token = await fetchToken(live.url, 'acme-admin');
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

async function createMember(email: string): Promise<string> {
  const res = await fetch(`${live.url}/members`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ brand_id: 'brand-acme', email, first_name: 'Hook' }),
  });
  expect(res.status).toBe(201);
  const [row] = await live.db.sql`SELECT id FROM members WHERE lower(email) = ${email.toLowerCase()}`;
  return row!.id as string;
}

it('webhooks verify accepts a delivery captured from the real server and explains why a wrong secret or a changed body fail', async () => {
  const hooks = await receiver();
  try {
    const created = await cli.run([
      'webhooks',
      'create',
      '--url',
      `${hooks.url}/hook`,
      '--events',
      'member.created',
      '--print-secret',
    ]);
    expect(created.code, describeRun(created)).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [subscription] = await live.db.sql`SELECT url, events FROM webhook_subscriptions`;
    expect(subscription).toMatchObject({ url: `${hooks.url}/hook`, events: ['member.created'] });

    const memberId = await createMember('hooked@example.org');
    const delivery = await hooks.next();
    expect(delivery.path).toBe('/hook');
    const event = JSON.parse(delivery.body.toString('utf8')) as { type: string; data: { member_id: string } };
    expect(event).toMatchObject({ type: 'member.created', data: { member_id: memberId, brand_id: 'brand-acme' } });

    // As a receiver's log would keep them: "Name: value" lines, and the exact body bytes.
    const headerLines: string[] = [];
    for (let i = 0; i < delivery.rawHeaders.length; i += 2)
      headerLines.push(`${delivery.rawHeaders[i]}: ${delivery.rawHeaders[i + 1]}`);
    await writeFile(path.join(cli.dir, 'headers.txt'), `${headerLines.join('\n')}\n`);
    await writeFile(path.join(cli.dir, 'body.json'), delivery.body);
    await writeFile(path.join(cli.dir, 'secret.txt'), `${secret}\n`, { mode: 0o600 });

    // The secret from a file, from stdin, or from the environment: each verifies the real delivery.
    const fromFile = await cli.run([
      'webhooks',
      'verify',
      'body.json',
      '--secret-file',
      'secret.txt',
      '--headers-file',
      'headers.txt',
    ]);
    expect(fromFile.code, describeRun(fromFile)).toBe(0);
    expect(fromFile.stdout).toBe('✔ Loyalty-Signature: valid\n✔ webhook-signature: valid\n');
    const fromStdin = await cli.run(
      ['webhooks', 'verify', 'body.json', '--secret-stdin', '--headers-file', 'headers.txt'],
      { input: `${secret}\n` },
    );
    expect(fromStdin.code, describeRun(fromStdin)).toBe(0);
    expect(fromStdin.stdout).toBe('✔ Loyalty-Signature: valid\n✔ webhook-signature: valid\n');
    const fromEnv = await cli.run(
      ['webhooks', 'verify', '--signature', String(delivery.headers['loyalty-signature'])],
      { input: delivery.body.toString('utf8'), env: { LOYALTY_WEBHOOK_SECRET: secret } },
    );
    expect(fromEnv.code, describeRun(fromEnv)).toBe(0);
    expect(fromEnv.stdout).toBe('✔ Loyalty-Signature: valid\n');

    // The secret as a flag value would be in the process list: refused before anything is read.
    const onArgv = await cli.run([
      'webhooks',
      'verify',
      'body.json',
      '--secret',
      secret,
      '--headers-file',
      'headers.txt',
    ]);
    expect(onArgv.code, describeRun(onArgv)).toBe(2);
    expect(onArgv.stdout).toBe('');
    expect(onArgv.stderr).toContain('--secret does not take the signing secret as a value');
    expect(onArgv.stderr).toContain('process list');
    expect(onArgv.stderr).toMatch(
      /→ Give it with --secret-file <path>, --secret-stdin, or the LOYALTY_WEBHOOK_SECRET environment variable\./,
    );
    expect(onArgv.stderr).not.toContain(secret);

    const wrongSecret = `whsec_${randomBytes(32).toString('base64')}`;
    await writeFile(path.join(cli.dir, 'wrong-secret.txt'), `${wrongSecret}\n`, { mode: 0o600 });
    const wrong = await cli.run([
      'webhooks',
      'verify',
      'body.json',
      '--secret-file',
      'wrong-secret.txt',
      '--headers-file',
      'headers.txt',
    ]);
    expect(wrong.code, describeRun(wrong)).toBe(1);
    expect(wrong.stdout).toContain('✖ Loyalty-Signature: invalid — the body was changed or the secret is wrong');
    expect(wrong.stderr).toContain('The delivery does not verify: the body was changed or the secret is wrong.');
    expect(wrong.stderr).not.toMatch(/^\s+at /m);

    const changed = Buffer.from(delivery.body.toString('utf8').replace('"brand-acme"', '"brand-evil"'));
    expect(changed.equals(delivery.body)).toBe(false);
    await writeFile(path.join(cli.dir, 'changed.json'), changed);
    const tampered = await cli.run([
      'webhooks',
      'verify',
      'changed.json',
      '--secret-file',
      'secret.txt',
      '--headers-file',
      'headers.txt',
    ]);
    expect(tampered.code, describeRun(tampered)).toBe(1);
    expect(tampered.stdout).toContain('✖ Loyalty-Signature: invalid — the body was changed or the secret is wrong');
    expect(tampered.stdout).toContain('✖ webhook-signature: invalid — the body was changed or the secret is wrong');

    // One byte more (a newline an editor added) is a change too.
    await writeFile(path.join(cli.dir, 'newline.json'), Buffer.concat([delivery.body, Buffer.from('\n')]));
    const newline = await cli.run([
      'webhooks',
      'verify',
      'newline.json',
      '--secret-file',
      'secret.txt',
      '--headers-file',
      'headers.txt',
    ]);
    expect(newline.code, describeRun(newline)).toBe(1);
    expect(newline.stderr).toContain('ends with a newline');
  } finally {
    await hooks.close();
  }
});

it('webhooks listen --forward-to re-delivers a new event signed with the printed local secret, and stops on SIGINT', async () => {
  const local = await receiver();
  try {
    const printed = await cli.run(['webhooks', 'listen', '--print-secret']);
    expect(printed.code, describeRun(printed)).toBe(0);
    const secret = printed.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const listener = cli.spawn(['webhooks', 'listen', '--forward-to', `${local.url}/local`, '--wait', '2'], {
      timeoutMs: 60_000,
    });
    try {
      await listener.waitFor(
        /Listening for all events on .*, forwarding to http:\/\/127\.0\.0\.1:\d+\/local\. Ctrl-C to stop\./,
      );
      const shown = await listener.waitFor(/Signing secret for \S+: (whsec_\S+) \(same every run/);
      expect(shown[1]).toBe(secret);

      const memberId = await createMember('listened@example.org');
      const forwarded = await local.next();
      expect(forwarded.path).toBe('/local');
      const body = forwarded.body.toString('utf8');
      const event = JSON.parse(body) as { id: string; type: string; data: { member_id: string } };
      expect(event).toMatchObject({ type: 'member.created', data: { member_id: memberId, brand_id: 'brand-acme' } });
      const [stored] = await live.db
        .sql`SELECT id::text FROM events WHERE type = 'member.created' AND data->>'member_id' = ${memberId}`;
      expect(event.id).toBe(stored!.id);

      // The signing rules of openapi.yaml, computed here with node:crypto.
      const headers = forwarded.headers;
      const hex = createHmac('sha256', Buffer.from(secret, 'utf8')).update(forwarded.body).digest('hex');
      expect(headers['loyalty-signature']).toBe(hex);
      expect(headers['webhook-id']).toBe(event.id);
      const timestamp = Number(headers['webhook-timestamp']);
      expect(Math.abs(Date.now() / 1000 - timestamp)).toBeLessThan(60);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const expected = createHmac('sha256', key).update(`${event.id}.${timestamp}.${body}`).digest();
      const [version, signature] = String(headers['webhook-signature']).split(',');
      expect(version).toBe('v1');
      expect(timingSafeEqual(Buffer.from(signature!, 'base64'), expected)).toBe(true);

      await listener.waitFor(new RegExp(`member\\.created\\s+${event.id}`), { stream: 'stdout' });
      await listener.waitFor(/→ 204 POST http:\/\/127\.0\.0\.1:\d+\/local \[\d+ ms\]/);
    } finally {
      listener.child.kill('SIGINT');
    }
    const stopped = await listener.exited;
    expect(stopped.code, describeRun(stopped)).toBe(130);
    expect(stopped.stderr).toContain('Stopped listening.');
    expect(stopped.stderr).not.toMatch(/^\s+at /m);
    expect(local.requests).toHaveLength(1);
  } finally {
    await local.close();
  }
});
