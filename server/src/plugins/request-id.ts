import { randomUUID } from 'node:crypto';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';

/** What a client may send as its own id: short, and harmless in a log line or a header. */
const SAFE_ID = /^[A-Za-z0-9._:+=-]{1,128}$/;

declare module '@hapi/hapi' {
  interface RequestApplicationState {
    /** The client's X-Request-Id when it is safe (SAFE_ID), a new UUID otherwise. */
    requestId?: string;
  }
}

/** The request's id (set at onRequest by requestIdPlugin). */
export const requestIdOf = (request: Request): string => request.app.requestId ?? '-';

/**
 * X-Request-Id end to end: a client's value is kept when it is safe (at most 128 characters of
 * `A-Z a-z 0-9 . _ : + = -`), otherwise one is made; every response carries it, errors and 429
 * included, so a report about one answer can be found in the server's log.
 */
export const requestIdPlugin: Plugin<Record<string, never>> = {
  name: 'loyalty-request-id',
  register(server) {
    server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
      const sent = request.headers['x-request-id'];
      const id = typeof sent === 'string' && SAFE_ID.test(sent) ? sent : randomUUID();
      request.app.requestId = id;
      // On Node's response itself: hapi sends its headers with writeHead, which keeps this one,
      // whichever extension takes an answer over (an error, a 429, a 503 of a database outage).
      request.raw.res.setHeader('x-request-id', id);
      return h.continue;
    });
  },
};
