import { createPrivateKey, type KeyObject } from 'node:crypto';
import { GatewayClientError } from '../errors';

export const MIN_RSA_BITS = 2048;

/**
 * Loads the merchant's RSA private key for OAuth RSA-SHA256 (PEM, PKCS#8 `BEGIN PRIVATE KEY` or
 * PKCS#1 `BEGIN RSA PRIVATE KEY`, optionally encrypted). Refused at load when it is not RSA or
 * is under 2048 bits (spec §5.3, §8). The error never contains key material.
 */
export function loadRsaPrivateKey(pem: string | Buffer, passphrase?: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(
      passphrase === undefined
        ? { key: pem, format: 'pem' }
        : { key: pem, format: 'pem', passphrase },
    );
  } catch {
    throw new GatewayClientError('invalid-key', 'RSA private key could not be read (PEM expected)');
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new GatewayClientError('invalid-key', 'private key is not an RSA key');
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) {
    throw new GatewayClientError(
      'invalid-key',
      `RSA private key has ${bits} bits; at least ${MIN_RSA_BITS} required`,
    );
  }
  return key;
}
