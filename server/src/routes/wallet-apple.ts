import type { Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { authorizedPass, checkPassType } from '../services/wallet/apple-web-service.js';
import { findWalletPassById } from '../services/wallet/wallet-pass.js';
import { listSandboxPushes, pushTokenOf } from '../services/wallet/wallet-push-sink.js';
import { passesUpdatedSince, registerDevice, unregisterDevice } from '../services/wallet/wallet-registrations.js';
import { longestWaitSeconds } from './events.js';
import { payloadOf, queryOf } from './route-options.js';
import type { RouteDef } from './types.js';
import { pkpassResponse } from './wallet-passes.js';

/**
 * Apple's pass-update web service under pass.json's webServiceURL (`<base URL>/wallet/apple`,
 * services/wallet/pass-identity.ts), and the sandbox's push sink. No bearer token: the pass's
 * authenticationToken (`Authorization: ApplePass …`) is the credential of the pass's routes, the
 * push token that of the sink's; all count against the per-IP rate limit (plugins/rate-limit.ts
 * counts every request without a bearer token by its address).
 */

const BASE = '/wallet/apple/v1';
type Params = { deviceLibraryIdentifier: string; passTypeIdentifier: string; serialNumber: string };

const authorization = (request: Request) => request.headers.authorization as string | undefined;

/** The pass of the path, when the request carries its ApplePass token (401 otherwise). */
async function passOf(request: Request) {
  const app = appOf(request);
  const { passTypeIdentifier, serialNumber } = request.params as Params;
  checkPassType(app.config, passTypeIdentifier);
  return authorizedPass(app.config, await findWalletPassById(app.sql, serialNumber), authorization(request));
}

const DONE = { success: true } as const;

export const walletAppleRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: `${BASE}/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}/{serialNumber}`,
    handler: async (request, h) => {
      const pass = await passOf(request);
      const { deviceLibraryIdentifier, passTypeIdentifier } = request.params as Params;
      const { pushToken } = payloadOf<Schemas['AppleWalletRegistrationRequest']>(request);
      const { created } = await registerDevice(appOf(request).sql, pass, {
        deviceLibraryIdentifier,
        passTypeIdentifier,
        pushToken,
      });
      return h.response(DONE satisfies Schemas['AppleWalletDone']).code(created ? 201 : 200);
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}/{serialNumber}`,
    handler: async (request) => {
      const pass = await passOf(request);
      await unregisterDevice(appOf(request).sql, pass, (request.params as Params).deviceLibraryIdentifier);
      return DONE satisfies Schemas['AppleWalletDone'];
    },
  },
  {
    method: 'GET',
    path: `${BASE}/devices/{deviceLibraryIdentifier}/registrations/{passTypeIdentifier}`,
    handler: async (request, h) => {
      const app = appOf(request);
      const { deviceLibraryIdentifier, passTypeIdentifier } = request.params as Params;
      checkPassType(app.config, passTypeIdentifier);
      const { passesUpdatedSince: since } = queryOf<{ passesUpdatedSince?: string }>(request);
      const updated = await passesUpdatedSince(app.sql, deviceLibraryIdentifier, passTypeIdentifier, since);
      if (!updated) return h.response().code(204);
      return updated satisfies Schemas['AppleWalletSerialNumbers'];
    },
  },
  {
    method: 'GET',
    path: `${BASE}/passes/{passTypeIdentifier}/{serialNumber}`,
    handler: async (request, h) => {
      const pass = await passOf(request);
      // The .pkpass download's own answer: its ETag and Last-Modified, 304 before anything is signed.
      return pkpassResponse(appOf(request), h, pass);
    },
  },
  {
    method: 'POST',
    path: `${BASE}/log`,
    handler: (request) => {
      const { logs } = payloadOf<Schemas['AppleWalletLogRequest']>(request);
      // Wallet's own error messages about this web service, for whoever runs the server.
      request.logger?.warn({ event: 'apple_wallet_log', logs }, 'Apple Wallet reported problems with the web service');
      return DONE satisfies Schemas['AppleWalletDone'];
    },
  },
  {
    method: 'GET',
    path: '/sandbox/wallet/pushes',
    handler: async (request) => {
      const app = appOf(request);
      const q = queryOf<{ after?: string; wait?: number }>(request);
      const gone = new AbortController();
      request.raw.req.once('close', () => gone.abort());
      const page = await listSandboxPushes(
        app.sql,
        pushTokenOf(authorization(request)),
        {
          after: q.after,
          waitSeconds:
            q.wait === undefined ? undefined : Math.min(q.wait, longestWaitSeconds(app.config.requestTimeoutMs)),
        },
        // Waiting polls woken by pushes are capped per address (anyone can make up a push token).
        { signal: gone.signal, pollKey: request.info.remoteAddress },
      );
      return page satisfies Schemas['SandboxWalletPushList'];
    },
  },
];
