import { deref, type OpenApiDocument } from '../../lib/openapi.js';
import type { Schemas } from '../../lib/schemas.js';
import { eventTypesOf } from './events.js';

type Entry = Schemas['WebhookEventTypeListResponse']['data'][number];

/** A schema with every local `$ref` replaced by what it names (the document's schemas are not recursive). */
function inline(document: OpenApiDocument, node: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('openapi.yaml: a schema nests too deep to inline (a recursive $ref?)');
  if (Array.isArray(node)) return node.map((item) => inline(document, item, depth + 1));
  if (node === null || typeof node !== 'object') return node;
  if ('$ref' in node) return inline(document, deref(document, node), depth + 1);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(document, value, depth + 1)]));
}

const catalogues = new WeakMap<OpenApiDocument, Entry[]>();

/**
 * GET /webhook-event-types: one entry per key of the document's `webhooks` section, in its order,
 * with the operation's summary and description and the JSON Schema of the envelope, references
 * inlined so that each schema stands alone. Built once per loaded document.
 */
export function eventCatalogue(document: OpenApiDocument): Entry[] {
  const cached = catalogues.get(document);
  if (cached) return cached;
  const subscribable = new Set<string>(eventTypesOf(document));
  const webhooks = (document as { webhooks?: Record<string, { post: Record<string, unknown> }> }).webhooks ?? {};
  const entries = Object.entries(webhooks).map(([type, item]): Entry => {
    const op = item.post;
    const body = deref<{ content: { 'application/json': { schema: unknown } } }>(document, op.requestBody);
    return {
      type,
      summary: String(op.summary ?? ''),
      description: String(op.description ?? '').trim(),
      subscribable: subscribable.has(type),
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        ...(inline(document, body.content['application/json'].schema) as Record<string, unknown>),
      },
    };
  });
  catalogues.set(document, entries);
  return entries;
}
