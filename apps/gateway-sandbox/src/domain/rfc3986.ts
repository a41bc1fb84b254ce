/**
 * RFC 3986 percent-encoding as OAuth 1.0a (RFC 5849 §3.6) requires: every byte of the UTF-8
 * form except the unreserved set `A-Z a-z 0-9 - . _ ~` becomes `%XX` with upper-case hex.
 * Written byte by byte on purpose (not encodeURIComponent with patches), so that the sandbox's
 * verifier shares no code path with any client.
 */
const UNRESERVED = new Uint8Array(256);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') {
  UNRESERVED[ch.charCodeAt(0)] = 1;
}
const HEX = '0123456789ABCDEF';

export function rfc3986Encode(value: string): string {
  const bytes = Buffer.from(value, 'utf8');
  let out = '';
  for (const byte of bytes) {
    if (UNRESERVED[byte] === 1) {
      out += String.fromCharCode(byte);
    } else {
      out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
    }
  }
  return out;
}

/** Strict percent-decoding (`+` stays `+`); undefined when the escape sequence is malformed. */
export function percentDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
