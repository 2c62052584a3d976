// A webhook receiver on Express (express is not a dependency of this repository: npm install express).
// Run: LOYALTY_WEBHOOK_SECRET=whsec_… node sdk/examples/webhooks-express.mjs
import express from 'express';
import { pathToFileURL } from 'node:url';
import { constructEvent, WebhookVerificationError } from '@loyalty/sdk/webhooks';

export function createWebhookApp(secret, onEvent) {
  const app = express();
  // express.raw keeps the body as a Buffer for this route; express.json() would parse it and break the signature.
  app.post('/webhooks', express.raw({ type: 'application/json' }), (req, res) => {
    let event;
    try {
      event = constructEvent(req.body, req.headers, secret);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      res.status(400).type('text/plain').send(err.reason);
      return;
    }
    onEvent(event);
    res.sendStatus(204);
  });
  return app;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  createWebhookApp(process.env.LOYALTY_WEBHOOK_SECRET, (event) => console.log(event.type, event.id)).listen(
    Number(process.env.PORT ?? 8080),
  );
}
