// The usual reasons a webhook signature does not verify, tried one by one on a captured delivery
// (`loyalty webhooks verify --explain`): each variant of the body or the secret is signed with the
// SDK's own signer, and a variant that reproduces the signature in the header names the mistake.
import { createSecretKey } from 'node:crypto';
import { loyaltyDigest, standardDigest, standardKeyBytesOf } from '@loyalty/sdk/signing';

export type MistakeId =
  | 'reserialized_json'
  | 'trailing_newline'
  | 'line_endings'
  | 'reencoded_body'
  | 'secret_whitespace'
  | 'secret_prefix'
  | 'secret_key_form'
  | 'previous_secret'
  | 'stale_timestamp';

export interface Mistake {
  id: MistakeId;
  /** What differs, for this delivery. */
  what: string;
  /** One line: how to fix it in the receiver. */
  fix: string;
}

export interface Explanation {
  /** The mistakes that explain the failure; empty when none of the usual ones does. */
  mistakes: Mistake[];
  /** Whether a variant reproduced the signature in the header (false: the signature itself is unexplained). */
  signatureReproduced: boolean;
  /** Every variant that was tried. */
  tried: string[];
}

const FIXES: Record<MistakeId, string> = {
  reserialized_json:
    "Verify the raw request bytes before parsing (Express: express.raw({ type: 'application/json' }); hapi: payload: { parse: false, output: 'data' }); never JSON.stringify a parsed body.",
  trailing_newline:
    'Use the body exactly as received: nothing appends or strips a final newline (editors and `echo` add one to saved captures).',
  line_endings: 'Handle the body as bytes: no text-mode conversion of line endings (git autocrlf, Windows tools).',
  reencoded_body:
    'Keep the body as a Buffer; never decode it with another charset than UTF-8 and encode it again, nor add or strip a BOM.',
  secret_whitespace:
    'Trim the secret where it is read (a file or environment variable often ends with a newline): secret.trim().',
  secret_prefix: 'Use the whole secret, "whsec_" included, exactly as returned when the subscription was created.',
  secret_key_form:
    'Loyalty-Signature is keyed with the UTF-8 bytes of the whole "whsec_…" string, webhook-signature with the base64-decoded part after "whsec_" (the SDK does both).',
  previous_secret:
    'During a rotation the receiver keeps both secrets (newest first) until the previous one expires; a delivery signed before the rotation carries only the old signature.',
  stale_timestamp: '',
};

type Flagged = { id: MistakeId; what: string };
interface Variant<T> {
  value: T;
  label: string;
  mistakes: Flagged[];
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** JSON written again in the layouts a receiver (or a logger) commonly uses. */
const LAYOUTS: Array<{ name: string; write: (value: unknown) => string }> = [
  { name: 'compact JSON (JSON.stringify(value))', write: (v) => JSON.stringify(v) },
  { name: '2-space indented JSON (JSON.stringify(value, null, 2))', write: (v) => JSON.stringify(v, null, 2) },
  { name: '4-space indented JSON', write: (v) => JSON.stringify(v, null, 4) },
  { name: 'JSON with ", " and ": " separators (Python json.dumps)', write: spaced },
  {
    name: 'compact JSON with non-ASCII escaped as \\uXXXX',
    write: (v) =>
      JSON.stringify(v).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  },
];

function spaced(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spaced).join(', ')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, v]) => `${JSON.stringify(key)}: ${spaced(v)}`)
      .join(', ')}}`;
  return JSON.stringify(value);
}

function bodyVariants(body: Buffer): Variant<Buffer>[] {
  const variants: Variant<Buffer>[] = [{ value: body, label: 'the body as given', mistakes: [] }];
  const add = (value: Buffer, label: string, id: MistakeId, what: string) => {
    if (!value.equals(body)) variants.push({ value, label, mistakes: [{ id, what }] });
  };
  const text = body.toString('utf8');
  if (text.endsWith('\n'))
    add(
      body.subarray(0, body.length - (text.endsWith('\r\n') ? 2 : 1)),
      'the body without its trailing newline',
      'trailing_newline',
      'A trailing newline was added to the body: the bytes signed end without it.',
    );
  else
    add(
      Buffer.concat([body, Buffer.from('\n')]),
      'the body with a trailing newline',
      'trailing_newline',
      'The trailing newline of the body was removed: the bytes signed end with one.',
    );
  if (text.includes('\r\n'))
    add(
      Buffer.from(text.replaceAll('\r\n', '\n'), 'utf8'),
      'the body with CRLF turned into LF',
      'line_endings',
      'Line endings were converted: the body given has CRLF (\\r\\n) where the bytes signed have LF (\\n).',
    );
  else if (text.includes('\n'))
    add(
      Buffer.from(text.replaceAll('\n', '\r\n'), 'utf8'),
      'the body with LF turned into CRLF',
      'line_endings',
      'Line endings were converted: the body given has LF (\\n) where the bytes signed have CRLF (\\r\\n).',
    );
  if (body.subarray(0, 3).equals(BOM))
    add(
      body.subarray(3),
      'the body without a byte order mark',
      'reencoded_body',
      'A byte order mark (BOM, EF BB BF) was added at the start of the body.',
    );
  if (body.some((byte) => byte >= 0x80)) {
    // Mojibake (UTF-8 bytes read as latin1) has only characters up to U+00FF: writing them as latin1 restores the bytes.
    if ([...text].every((c) => c.charCodeAt(0) <= 0xff))
      add(
        Buffer.from(text, 'latin1'),
        'the body decoded as UTF-8 and written as latin1 (undoing a latin1 read)',
        'reencoded_body',
        'The body was re-encoded: its UTF-8 bytes were read as latin1 and written back as UTF-8 (é became Ã©).',
      );
    add(
      Buffer.from(body.toString('latin1'), 'utf8'),
      'the body read as latin1 and written as UTF-8',
      'reencoded_body',
      'The body was re-encoded: the body given is latin1 (é is one byte, E9) where the bytes signed are UTF-8.',
    );
  }
  // Re-serializations last: a byte-level change that also survives parsing is the more precise name.
  let parsed: unknown;
  let isJson = false;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
    isJson = true;
  } catch {
    // not JSON: no layouts to try
  }
  if (isJson) {
    const layoutGiven = LAYOUTS.find((l) => l.write(parsed) === text.trimEnd());
    const given = layoutGiven
      ? `${layoutGiven.name}${layoutGiven.write(parsed) === text ? '' : ' plus trailing whitespace'}`
      : 'in another layout';
    for (const layout of LAYOUTS)
      add(
        Buffer.from(layout.write(parsed), 'utf8'),
        `the body re-serialized as ${layout.name}`,
        'reserialized_json',
        `The body was re-serialized from parsed JSON: the bytes signed are ${layout.name}, the body given is ${given}.`,
      );
  }
  return variants;
}

/** The secret strings to try: each given secret, trimmed or not, with or without "whsec_". */
function secretVariants(secrets: readonly string[], previous: readonly string[]): Variant<string>[] {
  const variants: Variant<string>[] = [];
  const seen = new Set<string>();
  const push = (value: string, label: string, mistakes: Flagged[]) => {
    if (seen.has(value)) return;
    seen.add(value);
    variants.push({ value, label, mistakes });
  };
  const all = [
    ...secrets.map((s, i) => ({ s, name: secrets.length > 1 ? `secret ${i + 1}` : 'the secret', old: false })),
    ...previous.map((s, i) => ({ s, name: `previous secret ${previous.length > 1 ? i + 1 : ''}`.trim(), old: true })),
  ];
  for (const { s, name, old } of all) {
    const base: Flagged[] = old
      ? [
          {
            id: 'previous_secret',
            what: `The delivery is signed with the ${name} (--previous-secret-file), not with the current one.`,
          },
        ]
      : [];
    push(s, `${name} as given`, base);
    const trimmed = s.trim();
    if (trimmed !== s)
      push(trimmed, `${name} trimmed`, [
        ...base,
        {
          id: 'secret_whitespace',
          what: 'The secret given has whitespace or a newline around it; the signer had none.',
        },
      ]);
    else
      push(`${s}\n`, `${name} with a trailing newline`, [
        ...base,
        {
          id: 'secret_whitespace',
          what: 'The delivery was signed with the secret plus a trailing newline (a secret file read without trimming).',
        },
      ]);
    if (trimmed.startsWith('whsec_'))
      push(trimmed.slice('whsec_'.length), `${name} without "whsec_"`, [
        ...base,
        { id: 'secret_prefix', what: 'The delivery was signed with the secret minus its "whsec_" prefix.' },
      ]);
    else
      push(`whsec_${trimmed}`, `${name} with "whsec_" added`, [
        ...base,
        { id: 'secret_prefix', what: 'The secret given lacks its "whsec_" prefix.' },
      ]);
  }
  return variants;
}

/** Keys of one secret string for one header: the right form first, then the other header's form. */
function keyVariants(header: SignatureHeader, secret: Variant<string>): Variant<Buffer>[] {
  const raw = Buffer.from(secret.value, 'utf8');
  const decoded = standardKeyBytesOf(secret.value.trim());
  const [right, swapped] = header === 'Loyalty-Signature' ? [raw, decoded] : [decoded, raw];
  const what =
    header === 'Loyalty-Signature'
      ? 'Loyalty-Signature was computed with the base64-decoded secret as key instead of the UTF-8 bytes of the whole "whsec_…" string.'
      : 'webhook-signature was computed with the UTF-8 bytes of the secret string as key instead of the base64-decoded part after "whsec_".';
  return [
    { value: right, label: secret.label, mistakes: secret.mistakes },
    {
      value: swapped,
      label: `${secret.label}, base64-decoded vs raw key`,
      mistakes: [...secret.mistakes, { id: 'secret_key_form', what }],
    },
  ];
}

export type SignatureHeader = 'Loyalty-Signature' | 'webhook-signature';

export interface CapturedSignature {
  header: SignatureHeader;
  /** The header's value: space-separated entries (hex, or v1,<base64>). */
  signature: string;
  /** webhook-id and webhook-timestamp, for webhook-signature. */
  id?: string | undefined;
  timestamp?: string | undefined;
}

function entriesOf(captured: CapturedSignature): Buffer[] {
  const entries = captured.signature.trim().split(/\s+/);
  return captured.header === 'Loyalty-Signature'
    ? entries.map((e) => Buffer.from(e, 'hex'))
    : entries.filter((e) => e.startsWith('v1,')).map((e) => Buffer.from(e.slice(3), 'base64'));
}

function staleMistake(timestamp: string | undefined, toleranceSeconds: number, now: Date): Mistake | undefined {
  if (!timestamp || !/^\d+$/.test(timestamp)) return undefined;
  const age = Math.floor(now.getTime() / 1000) - Number(timestamp);
  if (Math.abs(age) <= toleranceSeconds) return undefined;
  const off = Math.abs(age);
  const what = `webhook-timestamp is ${off} s ${age > 0 ? 'old' : 'in the future'} (tolerance ${toleranceSeconds} s).`;
  const fix =
    age < 0
      ? `The receiver's clock is about ${off} s behind the sender's: sync it (NTP).`
      : off <= 3600
        ? `If the delivery is fresh, the receiver's clock is about ${off} s ahead: sync it (NTP); for a capture this old pass --tolerance ${off + 60}.`
        : `An old capture (or a replay) is refused by design; to check it anyway pass --tolerance ${off + 60}.`;
  return { id: 'stale_timestamp', what, fix };
}

/** Why an SDK check failed on a signature that a variant without mistakes reproduces. */
const REASON_MISTAKES: Partial<Record<string, Flagged>> = {
  secret_format: { id: 'secret_prefix', what: 'The secret given lacks its "whsec_" prefix (the SDK refuses it).' },
  secret_whitespace: {
    id: 'secret_whitespace',
    what: 'The secret given has whitespace or a newline around it (the SDK refuses it).',
  },
};

/**
 * Tries the usual mistakes on a signature that did not verify (`reason` from the SDK) and returns
 * the ones that reproduce it, fewest first; `undefined` for failures no variant can explain
 * (a missing or malformed header).
 */
export function explainSignatureFailure(
  captured: CapturedSignature,
  reason: string,
  body: Buffer,
  secrets: { current: readonly string[]; previous: readonly string[] },
  options: { toleranceSeconds: number; now?: Date | undefined },
): Explanation | undefined {
  if (reason === 'missing_header' || reason === 'malformed_header' || reason === 'body_not_raw') return undefined;
  const given = entriesOf(captured);
  const bodies = bodyVariants(body);
  const keys = secretVariants(secrets.current, secrets.previous).flatMap((s) => keyVariants(captured.header, s));
  const digest = (key: Buffer, b: Buffer) =>
    captured.header === 'Loyalty-Signature'
      ? loyaltyDigest(createSecretKey(key), b)
      : standardDigest(createSecretKey(key), captured.id ?? '', captured.timestamp ?? '', b);
  let best: Flagged[] | undefined;
  for (const b of bodies)
    for (const k of keys) {
      const mistakes = [...b.mistakes, ...k.mistakes];
      if (best && mistakes.length >= best.length) continue;
      // Offline comparison of a capture: no timing oracle to protect.
      if (k.value.length > 0 && given.some((g) => g.equals(digest(k.value, b.value)))) best = mistakes;
    }
  const found: Mistake[] = (
    best?.length === 0 ? [REASON_MISTAKES[reason]].filter((m) => m !== undefined) : (best ?? [])
  ).map((m) => ({ ...m, fix: FIXES[m.id] }));
  const stale =
    captured.header === 'webhook-signature'
      ? staleMistake(captured.timestamp, options.toleranceSeconds, options.now ?? new Date())
      : undefined;
  return {
    mistakes: stale ? [stale, ...found] : found,
    signatureReproduced: best !== undefined,
    tried: [...new Set([...bodies.map((b) => b.label), ...keys.map((k) => k.label)])],
  };
}
