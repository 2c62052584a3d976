import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { fillQueryFromBody, isObjectBody } from '../lib/http.js';

const MAX_BYTES = 1024 * 1024;

/**
 * Several read endpoints of the spec take their parameters as a JSON body on a GET. hapi does
 * not parse GET payloads, so this reads that body itself and fills in every parameter the
 * query string does not already give; validation then sees one set of query parameters.
 */
export const getBodyPlugin: Plugin<void> = {
  name: 'loyalty-get-body',
  register(server) {
    server.ext('onPostAuth', async (request: Request, h: ResponseToolkit) => {
      if (request.method !== 'get') return h.continue;
      // An operation without query parameters has nothing a body could give: the body is ignored,
      // not refused with a 400 that such operations do not document (found by the fuzz, test/fuzz).
      if (!request.route.settings.validate?.query) return h.continue;
      const length = Number(request.headers['content-length'] ?? 0);
      if (!length && !request.headers['transfer-encoding']) return h.continue;
      if (length > MAX_BYTES) throw Boom.entityTooLarge('Payload content length greater than maximum allowed: 1048576');
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of request.raw.req) {
        size += (chunk as Buffer).length;
        if (size > MAX_BYTES) throw Boom.entityTooLarge('Payload content length greater than maximum allowed: 1048576');
        chunks.push(chunk as Buffer);
      }
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return h.continue;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw Boom.badRequest('The request body is not valid JSON.');
      }
      if (!isObjectBody(body)) throw Boom.badRequest('The request body must be a JSON object.');
      fillQueryFromBody(request.query as Record<string, unknown>, body);
      return h.continue;
    });
  },
};
