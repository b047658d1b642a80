import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

// A software WebAuthn authenticator (ES256, attestation "none") for HTTP scenarios. Real
// browsers are covered by the Chromium test; this one makes assertions over plain HTTP.

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, n: number): number[] {
  const m = major << 5;
  if (n < 24) return [m | n];
  if (n < 0x100) return [m | 24, n];
  if (n < 0x10000) return [m | 25, n >> 8, n & 0xff];
  return [m | 26, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

/** Minimal CBOR encoder: integers, byte and text strings, arrays, maps (insertion order). */
export function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return Buffer.from(v >= 0 ? head(0, v) : head(1, -1 - v));
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([Buffer.from(head(3, b.length)), b]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([Buffer.from(head(2, v.length)), v]);
  if (Array.isArray(v)) return Buffer.concat([Buffer.from(head(4, v.length)), ...v.map(cbor)]);
  const parts: Buffer[] = [Buffer.from(head(5, v.size))];
  for (const [k, x] of v) parts.push(cbor(k), cbor(x));
  return Buffer.concat(parts);
}

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export interface CreationOptionsLike {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
export interface RequestOptionsLike {
  challenge: string;
  rpId?: string;
  allowCredentials?: Array<{ id: string }>;
}

/** One credential on one software authenticator. */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly key: KeyObject;
  private readonly pub: { x: string; y: string };
  private userHandle = '';
  /** Next signature counter; `countless` authenticators always send 0. */
  counter = 0;

  constructor(
    readonly origin: string,
    /** `offCurve`: registers a public key whose point is not on P-256 (a broken authenticator). */
    private readonly opts: { countless?: boolean; offCurve?: boolean } = {},
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.pub = { x: jwk.x!, y: opts.offCurve ? b64u(Buffer.alloc(32, 7)) : jwk.y! };
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), c, ...(attested ? [attested] : [])]);
  }

  /** `navigator.credentials.create()` for these options (user present and verified). */
  register(options: CreationOptionsLike) {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    this.userHandle = options.user.id;
    const coseKey = cbor(
      new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(this.pub.x, 'base64url')],
        [-3, Buffer.from(this.pub.y, 'base64url')],
      ]),
    );
    const len = Buffer.alloc(2);
    len.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), len, this.credentialId, coseKey]);
    const authData = this.authData(rpId, 0x45, 0, attested);
    const clientData = JSON.stringify({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin: this.origin,
      crossOrigin: false,
    });
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64u(clientData),
        attestationObject: b64u(
          cbor(
            new Map<string, Cbor>([
              ['fmt', 'none'],
              ['attStmt', new Map()],
              ['authData', authData],
            ]),
          ),
        ),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /** `navigator.credentials.get()` for these options; `origin`, `counter` and `userHandle`
   *  can be overridden to forge. */
  assert(options: RequestOptionsLike, over: { origin?: string; counter?: number; userHandle?: string } = {}) {
    const rpId = options.rpId ?? new URL(this.origin).hostname;
    if (!this.opts.countless && over.counter === undefined) this.counter += 1;
    const counter = this.opts.countless ? 0 : (over.counter ?? this.counter);
    const authData = this.authData(rpId, 0x05, counter);
    const clientData = Buffer.from(
      JSON.stringify({
        type: 'webauthn.get',
        challenge: options.challenge,
        origin: over.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.key);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64u(clientData),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: over.userHandle ?? (this.userHandle || undefined),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
