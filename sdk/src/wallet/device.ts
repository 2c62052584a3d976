/**
 * `WalletDevice`: a simulated phone with Apple Wallet, for tests and `loyalty wallet simulate`.
 * It speaks Apple's pass-update protocol to the pass's `webServiceURL` as iOS does (register with
 * a push token, list the passes updated since a tag, fetch a pass with `If-Modified-Since`,
 * unregister) and, in place of APNs, long-polls the reference server's sandbox push sink
 * (`GET /sandbox/wallet/pushes`) for the pushes sent to its push token.
 *
 *     const phone = new WalletDevice({ baseUrl: 'http://127.0.0.1:3000' });
 *     await phone.download(passCode);
 *     await phone.register();
 *     // … earn points …
 *     await phone.waitForPush({ waitSeconds: 10 });
 *     const latest = await phone.fetchLatest();
 *     if (latest.changed) console.log(latest.changes.map((c) => c.message));
 *     await phone.unregister();
 *
 * Failures are thrown as `LoyaltyError` (from `@loyalty/sdk`): an HTTP refusal with its status and
 * the server's error code, `network_error` (status 0) when the server cannot be reached.
 */
import { randomBytes } from 'node:crypto';
import { describeError, LoyaltyError } from '../errors.js';
import { type PassChange, diffPasses } from './diff.js';
import { type Pkpass, readPkpass } from './pass-json.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface WalletDeviceOptions {
  /** The reference server, e.g. `http://127.0.0.1:3000`: where passes are downloaded and pushes polled. */
  baseUrl: string;
  /** Transport (default: the global `fetch`, looked up per call). */
  fetch?: Fetch;
  /** Default: 32 random hex characters, like a phone's. */
  deviceLibraryIdentifier?: string;
  /** Default: 64 random hex characters, like an APNs device token. A secret: keep it out of logs. */
  pushToken?: string;
  /** The pass-update web service; default the downloaded pass's `webServiceURL`, as on a phone. */
  webServiceURL?: string;
}

/** A pass as the device holds it: the archive, its contents and its version headers. */
export interface DeviceWalletPass extends Pkpass {
  buffer: Buffer;
  lastModified: string | undefined;
  etag: string | undefined;
}

/** A push the sandbox push sink recorded for this device's push token. */
export interface WalletPush {
  id: string;
  topic: string;
  sent_at: string;
}

/** What `fetchLatest` found: an unchanged pass (304), or the new version and its changes. */
export type LatestPass =
  | { changed: false; pass: DeviceWalletPass }
  | { changed: true; pass: DeviceWalletPass; previous: DeviceWalletPass; changes: PassChange[] };

interface CallOptions {
  signal?: AbortSignal;
}

/** `ECONNREFUSED` rather than undici's `fetch failed`. */
const reasonOf = (error: unknown): string => {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  return String(cause?.code ?? cause?.message ?? (error as Error).message);
};

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export class WalletDevice {
  readonly baseUrl: string;
  readonly deviceLibraryIdentifier: string;
  /** The push token the device registers with; the sink answers its pushes only to it. */
  readonly pushToken: string;
  /** The pass the device holds (after `download`). */
  pass: DeviceWalletPass | undefined;
  /** The tag of the last `updatedSerials` answer (`lastUpdated`), sent as `passesUpdatedSince`. */
  lastUpdated: string | undefined;
  /** The push sink's cursor: the id of the last push seen. */
  pushCursor: string | undefined;
  readonly #fetch: Fetch | undefined;
  readonly #webServiceURL: string | undefined;

  constructor(options: WalletDeviceOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.deviceLibraryIdentifier = options.deviceLibraryIdentifier ?? hex(16);
    this.pushToken = options.pushToken ?? hex(32);
    this.#fetch = options.fetch;
    this.#webServiceURL = options.webServiceURL?.replace(/\/+$/, '');
  }

  /** Downloads `GET /wallet/{code}.pkpass` and holds it. A 404 (unknown code) throws `not_found`. */
  async download(code: string, options: CallOptions = {}): Promise<DeviceWalletPass> {
    const url = `${this.baseUrl}/wallet/${encodeURIComponent(code)}.pkpass`;
    const response = await this.#send(url, { headers: { accept: 'application/vnd.apple.pkpass' } }, options);
    this.pass = await this.#passOf(response, url);
    return this.pass;
  }

  /**
   * Registers the device for its pass's updates (Apple: `POST …/devices/{id}/registrations/{type}/{serial}`
   * with `Authorization: ApplePass <authenticationToken>`). `created`: false when it was already registered.
   */
  async register(options: CallOptions = {}): Promise<{ created: boolean }> {
    const response = await this.#send(
      this.#registrationUrl(),
      {
        method: 'POST',
        headers: { ...this.#auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ pushToken: this.pushToken }),
      },
      options,
    );
    return { created: response.status === 201 };
  }

  /** Unregisters the device from its pass (`DELETE` of the registration). */
  async unregister(options: CallOptions = {}): Promise<void> {
    await this.#send(this.#registrationUrl(), { method: 'DELETE', headers: this.#auth() }, options);
  }

  /**
   * Waits for pushes to this device's push token (the sandbox push sink, `GET /sandbox/wallet/pushes`):
   * those after the last one seen, or the first to arrive within `waitSeconds` (0–30, default 25).
   * Resolves with them (an empty list when none came in time). A server not in sandbox mode has
   * no sink: it answers 404.
   */
  async waitForPush(options: CallOptions & { waitSeconds?: number } = {}): Promise<WalletPush[]> {
    const wait = Math.max(0, Math.min(30, Math.round(options.waitSeconds ?? 25)));
    const query = new URLSearchParams({ wait: String(wait) });
    if (this.pushCursor !== undefined) query.set('after', this.pushCursor);
    const url = `${this.baseUrl}/sandbox/wallet/pushes?${query}`;
    const response = await this.#send(url, { headers: { authorization: `PushToken ${this.pushToken}` } }, options);
    const body = (await response.json()) as { data?: WalletPush[]; next_after?: string | null };
    if (typeof body.next_after === 'string') this.pushCursor = body.next_after;
    const pushes = Array.isArray(body.data) ? body.data : [];
    const last = pushes.at(-1);
    if (last && typeof body.next_after !== 'string') this.pushCursor = last.id;
    return pushes;
  }

  /**
   * The serial numbers of this device's passes updated since the last answer (Apple:
   * `GET …/devices/{id}/registrations/{type}?passesUpdatedSince=<tag>`; 204 → none). Keeps the new tag.
   */
  async updatedSerials(options: CallOptions = {}): Promise<string[]> {
    const pass = this.#held();
    const query =
      this.lastUpdated === undefined ? '' : `?${new URLSearchParams({ passesUpdatedSince: this.lastUpdated })}`;
    const url = `${this.#webService()}/v1/devices/${encodeURIComponent(this.deviceLibraryIdentifier)}/registrations/${encodeURIComponent(pass.passJson.passTypeIdentifier)}${query}`;
    const response = await this.#send(url, {}, options);
    if (response.status === 204) return [];
    const body = (await response.json()) as { serialNumbers?: string[]; lastUpdated?: string };
    if (typeof body.lastUpdated === 'string') this.lastUpdated = body.lastUpdated;
    return Array.isArray(body.serialNumbers) ? body.serialNumbers : [];
  }

  /**
   * Asks for the latest version of the pass (Apple: `GET …/passes/{type}/{serial}` with
   * `If-Modified-Since`): a 304 is `changed: false`; a new version replaces the held one and
   * comes with its `changes` (`diffPasses`). `conditional: false` sends no `If-Modified-Since`
   * (a phone always sends it; this is for telling a server's stale `Last-Modified` apart).
   */
  async fetchLatest(options: CallOptions & { conditional?: boolean } = {}): Promise<LatestPass> {
    const previous = this.#held();
    const { passTypeIdentifier, serialNumber } = previous.passJson;
    const url = `${this.#webService()}/v1/passes/${encodeURIComponent(passTypeIdentifier)}/${encodeURIComponent(serialNumber)}`;
    const headers: Record<string, string> = this.#auth();
    if (previous.lastModified && options.conditional !== false) headers['if-modified-since'] = previous.lastModified;
    const response = await this.#send(url, { headers }, options);
    if (response.status === 304) return { changed: false, pass: previous };
    const pass = await this.#passOf(response, url);
    this.pass = pass;
    return { changed: true, pass, previous, changes: diffPasses(previous.passJson, pass.passJson) };
  }

  #held(): DeviceWalletPass {
    if (!this.pass) throw new Error('WalletDevice: download a pass first.');
    return this.pass;
  }

  #webService(): string {
    const url = this.#webServiceURL ?? this.#held().passJson.webServiceURL;
    if (typeof url !== 'string' || !url)
      throw new Error('WalletDevice: the pass has no webServiceURL, so it cannot be updated.');
    return url.replace(/\/+$/, '');
  }

  #registrationUrl(): string {
    const { passTypeIdentifier, serialNumber } = this.#held().passJson;
    return `${this.#webService()}/v1/devices/${encodeURIComponent(this.deviceLibraryIdentifier)}/registrations/${encodeURIComponent(passTypeIdentifier)}/${encodeURIComponent(serialNumber)}`;
  }

  #auth(): Record<string, string> {
    const token = this.#held().passJson.authenticationToken;
    if (typeof token !== 'string' || !token)
      throw new Error('WalletDevice: the pass has no authenticationToken, so it cannot be registered.');
    return { authorization: `ApplePass ${token}` };
  }

  async #passOf(response: Response, url: string): Promise<DeviceWalletPass> {
    const buffer = Buffer.from(await response.arrayBuffer());
    let opened: Pkpass;
    try {
      opened = readPkpass(buffer);
    } catch (error) {
      throw new LoyaltyError({
        status: response.status,
        code: 'invalid_response',
        message: `${url} did not answer a readable .pkpass: ${(error as Error).message}`,
        response,
        cause: error,
      });
    }
    return {
      ...opened,
      buffer,
      lastModified: response.headers.get('last-modified') ?? undefined,
      etag: response.headers.get('etag') ?? undefined,
    };
  }

  /** One request; an answer of 400 or more (or none) is thrown as a `LoyaltyError`. */
  async #send(url: string, init: RequestInit, options: CallOptions): Promise<Response> {
    const fetch = this.#fetch ?? globalThis.fetch;
    let response: Response;
    try {
      response = await fetch(url, { ...init, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new LoyaltyError({
        status: 0,
        code: 'network_error',
        message: `${new URL(url).origin} cannot be reached (${reasonOf(error)})`,
        cause: error,
      });
    }
    if (response.status < 400) return response;
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Not the API's JSON error (an HTML page, a proxy's text): say which request, not the page.
      body = `${init.method ?? 'GET'} ${new URL(url).pathname} answered HTTP ${response.status}`;
    }
    throw new LoyaltyError({ status: response.status, ...describeError(response.status, body), response, body });
  }
}
