// A webhook receiver on hapi. Run: LOYALTY_WEBHOOK_SECRET=whsec_… node sdk/examples/webhooks-hapi.mjs
import Hapi from '@hapi/hapi';
import { pathToFileURL } from 'node:url';
import { constructEvent, WebhookVerificationError } from '@loyalty/sdk/webhooks';

export function createWebhookServer(secret, onEvent, options = {}) {
  const server = Hapi.server({ port: 8080, host: '127.0.0.1', ...options });
  server.route({
    method: 'POST',
    path: '/webhooks',
    // Keep the body raw (a Buffer): verification needs the exact bytes.
    options: { payload: { parse: false, output: 'data' } },
    handler(request, h) {
      let event;
      try {
        event = constructEvent(request.payload, request.headers, secret);
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        return h.response(err.reason).code(400).type('text/plain');
      }
      onEvent(event);
      return h.response().code(204);
    },
  });
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = createWebhookServer(process.env.LOYALTY_WEBHOOK_SECRET, (event) => console.log(event.type, event.id));
  await server.start();
  console.log(`listening on ${server.info.uri}/webhooks`);
}
