import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookClient, SNIPPET_CHARS, snippetOf, type WebhookClient } from './safe-fetch.js';
import type { Resolver } from './ssrf.js';
import { resolverTo, unresolvable } from '#test-helpers/resolver.js';
import { BLOCKED_PORTS } from './webhook-ports.js';

/**
 * The delivery client against real sockets on 127.0.0.1: what it refuses to send, and what of a
 * response it keeps for the delivery log. Names are pointed at addresses by injected resolvers;
 * addresses outside 127.0.0.1 are documentation ranges (TEST-NET), never routed.
 */

type Reply = { status: number; type?: string; body: string | Buffer };
const replies = new Map<string, Reply>();
const hits: string[] = [];

const listen = (server: Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

function receiver(): Server {
  return createServer((req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      const reply = replies.get(req.url ?? '') ?? { status: 200, type: 'text/plain', body: 'ok' };
      res.writeHead(reply.status, reply.type ? { 'content-type': reply.type } : {}).end(reply.body);
    });
  });
}

let open: Server;
let port: number;
/** A receiver on a port public hosts may not be sent to (the first listed port free here). */
let listed: Server;
let listedPort: number;
const clients: WebhookClient[] = [];

const client = (allowInsecure: boolean, resolve?: Resolver) => {
  const made = createWebhookClient({ timeoutMs: 1000, allowInsecure, resolve });
  clients.push(made);
  return made;
};
const send = (c: WebhookClient, url: string) => c.post(url, '{}', {});

beforeAll(async () => {
  open = receiver();
  port = await listen(open, 0);
  for (const candidate of BLOCKED_PORTS) {
    const server = receiver();
    try {
      listedPort = await listen(server, candidate);
      listed = server;
      break;
    } catch {
      server.close();
    }
  }
  if (!listed) throw new Error('no listed port is free on 127.0.0.1');
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  for (const server of [open, listed]) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

describe('sending: the port rule at send time', () => {
  it('does not send to a stored URL whose port breaks the rule, nor even resolve its host', async () => {
    const resolve = unresolvable();
    const strict = client(false, resolve);
    for (const url of [
      'https://hooks.example.test:6379/x',
      'https://hooks.example.test:22/x',
      'https://hooks.example.test:0/x',
      `https://hooks.example.test:${listedPort}/x`,
      'https://93.184.216.34:5432/x',
    ]) {
      expect(await send(strict, url), url).toMatchObject({
        statusCode: null,
        error: 'address_not_allowed',
        snippet: null,
      });
    }
    expect(resolve.calls).toEqual([]);
  });

  it('in development mode sends to any port of a loopback address, named or literal', async () => {
    const dev = client(true, resolverTo('127.0.0.1'));
    replies.set('/local', { status: 204, body: '' });
    expect(await send(dev, `http://127.0.0.1:${listedPort}/local`)).toMatchObject({ statusCode: 204, error: null });
    expect(await send(dev, `http://receiver.test:${listedPort}/local`)).toMatchObject({ statusCode: 204, error: null });
    expect(await send(dev, `http://receiver.test:${port}/local`)).toMatchObject({ statusCode: 204, error: null });
  });

  it('in development mode refuses such a port on any other address, before connecting', async () => {
    const before = hits.length;
    const dev = client(true, resolverTo('203.0.113.7'));
    expect(await send(dev, `http://hooks.example.test:${listedPort}/x`)).toMatchObject({
      statusCode: null,
      error: 'address_not_allowed',
    });
    expect(await send(dev, `http://203.0.113.7:${listedPort}/x`)).toMatchObject({
      statusCode: null,
      error: 'address_not_allowed',
    });
    expect(await send(dev, 'http://hooks.example.test:0/x')).toMatchObject({
      statusCode: null,
      error: 'address_not_allowed',
    });
    expect(hits.length).toBe(before);
  });
});

describe('the response snippet of the delivery log', () => {
  const reply = async (path: string, r: Reply) => {
    replies.set(path, r);
    return send(client(true), `http://127.0.0.1:${port}${path}`);
  };

  it(`keeps at most ${SNIPPET_CHARS} characters, and the status`, async () => {
    expect(SNIPPET_CHARS).toBe(64);
    expect(await reply('/long', { status: 500, type: 'text/plain', body: 'x'.repeat(5000) })).toMatchObject({
      statusCode: 500,
      error: 'http_status',
      snippet: 'x'.repeat(64),
    });
    expect(
      (await reply('/wide', { status: 400, type: 'text/plain; charset=utf-8', body: 'é'.repeat(300) })).snippet,
    ).toBe('é'.repeat(64));
    expect(
      (await reply('/short', { status: 400, type: 'application/problem+json', body: '{"error":"signature_mismatch"}' }))
        .snippet,
    ).toBe('{"error":"signature_mismatch"}');
  });

  it('makes it one printable line: whitespace runs become a space, control and format characters U+FFFD', async () => {
    const body = '  err\x1b[31mred\r\n\tline 2\x00\u202Eevil\u200B!\x7f\u0085end \n';
    expect((await reply('/dirty', { status: 400, type: 'text/html', body })).snippet).toBe(
      'err\uFFFD[31mred line 2\uFFFD\uFFFDevil\uFFFD!\uFFFD end',
    );
  });

  it('keeps nothing of a body that is not text, but still the status', async () => {
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x41]);
    expect(await reply('/png', { status: 503, type: 'image/png', body: binary })).toMatchObject({
      statusCode: 503,
      snippet: null,
    });
    expect(
      await reply('/octets', { status: 200, type: 'application/octet-stream', body: 'readable but declared binary' }),
    ).toMatchObject({ statusCode: 200, snippet: null });
    expect(await reply('/untyped-binary', { status: 500, body: binary })).toMatchObject({
      statusCode: 500,
      snippet: null,
    });
    expect((await reply('/untyped-text', { status: 200, body: 'ok' })).snippet).toBe('ok');
    expect((await reply('/blank', { status: 502, type: 'text/plain', body: ' \r\n ' })).snippet).toBeNull();
  });
});

describe('snippetOf', () => {
  it('drops a UTF-8 sequence cut by the read cap instead of showing it', () => {
    const cut = Buffer.from('abc€', 'utf8').subarray(0, 5);
    expect(snippetOf(cut, 'text/plain')).toBe('abc');
    expect(snippetOf(cut, undefined)).toBe('abc');
  });

  it('takes text/*, JSON, XML and forms as text, whatever the parameters and case', () => {
    for (const type of [
      'text/plain',
      'TEXT/HTML; charset=UTF-8',
      'application/json',
      'application/vnd.api+json',
      'application/xml',
      'application/soap+xml',
      'application/x-www-form-urlencoded',
    ]) {
      expect(snippetOf(Buffer.from('fine'), type), type).toBe('fine');
    }
    for (const type of [
      'application/octet-stream',
      'application/pdf',
      'image/svg',
      'application/jsonx',
      'multipart/form-data; boundary=x',
    ]) {
      expect(snippetOf(Buffer.from('fine'), type), type).toBeNull();
    }
  });
});
