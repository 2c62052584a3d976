import type { components } from '@loyalty/sdk/generated';

/**
 * The request and response shapes of openapi.yaml as sdk/ generates them: the one contract the
 * server shares with its clients. Services type their results with these and routes check their
 * bodies with `satisfies`, so a shape is never written out a second time by hand.
 */
export type Schemas = components['schemas'];
