import type { components, paths } from '@loyalty/sdk/generated';

/**
 * The request and response shapes of openapi.yaml as sdk/ generates them: the one contract the
 * server shares with its clients. Services type their results with these and routes check their
 * bodies with `satisfies`, so a shape is never written out a second time by hand.
 */
export type Schemas = components['schemas'];

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The query parameters of an operation (validated before the handler runs). */
export type QueryOf<P extends keyof paths, M extends Method> = paths[P][M] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
