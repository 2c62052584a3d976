// A webhook receiver on plain node:http. Run: LOYALTY_WEBHOOK_SECRET=whsec_… node sdk/examples/webhooks-node-http.mjs
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { constructEvent, WebhookVerificationError } from '@loyalty/sdk/webhooks';

export function createWebhookServer(secret, onEvent) {
  return createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      let event;
      try {
        // The raw bytes, exactly as received: never JSON.parse first.
        event = constructEvent(Buffer.concat(chunks), req.headers, secret);
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        res.writeHead(400, { 'content-type': 'text/plain' }).end(err.reason);
        return;
      }
      onEvent(event); // keep it quick: acknowledge within 5 s, de-duplicate on event.id
      res.writeHead(204).end();
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  createWebhookServer(process.env.LOYALTY_WEBHOOK_SECRET, (event) => console.log(event.type, event.id)).listen(
    Number(process.env.PORT ?? 8080),
  );
}
