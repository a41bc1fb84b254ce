import {
  constants,
  createCipheriv,
  createDecipheriv,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
} from 'node:crypto';
import { Card } from './card';

/**
 * Card sealing (DESIGN.md guarantee 7). The producer seals the card to the gateway-adapter's RSA
 * public key; the orchestrator passes the string along unopened; only the adapter can open it.
 *
 * Envelope: `v1.<keyId>.<wrappedKey>.<iv>.<ciphertext>.<tag>`, each part base64url (keyId may be
 * empty). A fresh AES-256-GCM key encrypts the card JSON; RSA-OAEP with SHA-256 wraps that key.
 * The GCM additional authenticated data is the payment id, so a sealed card lifted from one
 * payment does not open under another.
 */
export const SEAL_VERSION = 'v1';

export type SealingErrorCode =
  'SEAL_MALFORMED' | 'SEAL_UNSUPPORTED_VERSION' | 'SEAL_OPEN_FAILED' | 'SEAL_INVALID_CARD';

export class SealingError extends Error {
  constructor(
    readonly code: SealingErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SealingError';
  }
}

export interface SealOptions {
  /** Identifies the recipient key pair, so the adapter can rotate keys. */
  keyId?: string;
}

export interface SealedEnvelope {
  version: typeof SEAL_VERSION;
  keyId?: string;
  wrappedKey: Buffer;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

const b64u = (b: Buffer): string => b.toString('base64url');
const unb64u = (s: string): Buffer => Buffer.from(s, 'base64url');
const B64U = /^[A-Za-z0-9_-]*$/;

/** Seals a validated card. Throws SealingError(SEAL_INVALID_CARD) on an invalid card. */
export function seal(
  card: Card,
  recipientPublicKeyPem: string,
  associatedData: string,
  options: SealOptions = {},
): string {
  const parsed = Card.safeParse(card);
  if (!parsed.success) {
    throw new SealingError(
      'SEAL_INVALID_CARD',
      'the card is not valid: ' + parsed.error.issues.map((i) => i.path.join('.')).join(', '),
    );
  }
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([
    cipher.update(JSON.stringify(parsed.data), 'utf8'),
    cipher.final(),
  ]);
  const tag = cipher.getAuthTag();
  const wrappedKey = publicEncrypt(
    { key: recipientPublicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    key,
  );
  const keyId = options.keyId === undefined ? '' : b64u(Buffer.from(options.keyId, 'utf8'));
  return [SEAL_VERSION, keyId, b64u(wrappedKey), b64u(iv), b64u(ciphertext), b64u(tag)].join('.');
}

/** Splits a sealed string into its parts without decrypting (e.g. to pick the key by keyId). */
export function parseSealed(sealed: string): SealedEnvelope {
  const parts = sealed.split('.');
  if (parts.length !== 6 || !parts.every((p) => B64U.test(p))) {
    throw new SealingError('SEAL_MALFORMED', 'a sealed card has six dot-separated base64url parts');
  }
  const [version, keyId, wrappedKey, iv, ciphertext, tag] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (version !== SEAL_VERSION) {
    throw new SealingError(
      'SEAL_UNSUPPORTED_VERSION',
      `unsupported sealed card version "${version}"`,
    );
  }
  const envelope: SealedEnvelope = {
    version: SEAL_VERSION,
    wrappedKey: unb64u(wrappedKey),
    iv: unb64u(iv),
    ciphertext: unb64u(ciphertext),
    tag: unb64u(tag),
  };
  if (keyId !== '') envelope.keyId = unb64u(keyId).toString('utf8');
  if (envelope.iv.length !== 12 || envelope.tag.length !== 16 || envelope.wrappedKey.length === 0) {
    throw new SealingError('SEAL_MALFORMED', 'a sealed card has a 12-byte iv and a 16-byte tag');
  }
  return envelope;
}

/**
 * Opens a sealed card. Any failure (wrong key, wrong associated data, tampering) is one error code,
 * SEAL_OPEN_FAILED, so callers cannot be used as a decryption oracle. A long-lived opener passes
 * the parsed KeyObject: parsing the PEM on every call costs more than the decryption.
 */
export function open(sealed: string, privateKey: string | KeyObject, associatedData: string): Card {
  const envelope = parseSealed(sealed);
  let plaintext: string;
  try {
    const key = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      envelope.wrappedKey,
    );
    const decipher = createDecipheriv('aes-256-gcm', key, envelope.iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(envelope.tag);
    plaintext = Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new SealingError('SEAL_OPEN_FAILED', 'the sealed card could not be opened');
  }
  const card = Card.safeParse(JSON.parse(plaintext));
  if (!card.success) {
    throw new SealingError('SEAL_INVALID_CARD', 'the sealed card does not hold a valid card');
  }
  return card.data;
}

/**
 * The fields of a gateway request that hold a sealed card (a transfer carries two): the
 * orchestrator drops them from stored requests and published rows once the saga is settled.
 */
export const SEALED_CARD_FIELDS: readonly string[] = ['sealedCard', 'sealedDestinationCard'];
