import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { Config } from '../../config.js';

/**
 * Pushes to Apple's APNs for Wallet passes, over HTTP/2 with the Pass Type ID certificate (TLS
 * client authentication): `POST /3/device/<push token>`, `apns-topic: <pass type id>`, body `{}`
 * (Wallet's pushes carry nothing: the device asks the web service what changed).
 *
 * Written on node:http2 rather than @parse/node-apn: that client leaves the body out when it is
 * `{}` (lib/client.js: `if (notification.body !== '{}') request.write(...)`), and an empty body is
 * not what Wallet's protocol sends (APNs answers `PayloadEmpty`). What is needed here is one
 * request shape and its answer, about sixty lines.
 *
 * `apns-push-type: background` with `apns-priority: 5` (Apple asks for a push type on every push,
 * and a background push must not use priority 10); no expiration (`apns-expiration: 0`: a device
 * that is offline gets no stale hint, it refreshes its passes when it comes back anyway).
 */

export type ApnsResult = { pushToken: string; status: number; reason?: string };

/** A credential given as its PEM text or as the path of a file holding it (config-wallet.ts). */
export const credentialText = (value: string): string =>
  /-----BEGIN [A-Z0-9 ]+-----/.test(value) ? value : readFileSync(value, 'utf8');

/** Answers that mean the token reaches no device any more: its registrations are forgotten. */
export const isGoneToken = (r: ApnsResult) =>
  r.status === 410 || (r.status === 400 && (r.reason === 'BadDeviceToken' || r.reason === 'DeviceTokenNotForTopic'));

const TIMEOUT_MS = 10_000;

/**
 * Sends one push to each token over one HTTP/2 connection and closes it. `ca`: a certificate to
 * trust besides the system's (tests: the local endpoint's); connection errors reject.
 */
export async function sendApnsPushes(
  apple: NonNullable<Config['wallet']['apple']>,
  apnsUrl: string,
  topic: string,
  pushTokens: readonly string[],
  { ca }: { ca?: string } = {},
): Promise<ApnsResult[]> {
  if (pushTokens.length === 0) return [];
  const session = http2.connect(apnsUrl, {
    cert: credentialText(apple.cert),
    key: credentialText(apple.key),
    passphrase: apple.keyPassphrase,
    ...(ca && { ca }),
  });
  const failed = new Promise<never>((_, reject) => session.once('error', reject));
  failed.catch(() => {});
  try {
    return await Promise.all(pushTokens.map((token) => Promise.race([pushOne(session, topic, token), failed])));
  } finally {
    session.close();
  }
}

function pushOne(session: http2.ClientHttp2Session, topic: string, pushToken: string): Promise<ApnsResult> {
  return new Promise((resolve, reject) => {
    const request = session.request({
      ':method': 'POST',
      ':path': `/3/device/${encodeURIComponent(pushToken)}`,
      'apns-topic': topic,
      'apns-push-type': 'background',
      'apns-priority': '5',
      'apns-expiration': '0',
      'content-type': 'application/json',
    });
    request.setTimeout(TIMEOUT_MS, () => request.close(http2.constants.NGHTTP2_CANCEL));
    let status = 0;
    let body = '';
    request.setEncoding('utf8');
    request.on('response', (headers) => {
      status = Number(headers[':status'] ?? 0);
    });
    request.on('data', (chunk: string) => {
      if (body.length < 4096) body += chunk;
    });
    request.on('error', reject);
    request.on('close', () => {
      if (!status) return reject(new Error('APNs: no answer to a push'));
      let reason: string | undefined;
      try {
        reason = body ? (JSON.parse(body) as { reason?: string }).reason : undefined;
      } catch {
        reason = undefined;
      }
      resolve({ pushToken, status, ...(reason && { reason }) });
    });
    request.end('{}');
  });
}
