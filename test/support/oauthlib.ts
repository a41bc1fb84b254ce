/**
 * Python's oauthlib as an independent OAuth 1.0a HMAC-SHA1 implementation for interop tests
 * (`oauthlib-oracle.py` beside this file). The interpreter is the system one, where the Debian
 * package `python3-oauthlib` installs (a pyenv/venv `python3` earlier on PATH would not see it);
 * `OAUTHLIB_PYTHON` overrides it. `scripts/ensure-test-tools.sh` (run by `scripts/with-infra.sh`)
 * installs the package. A missing interpreter or module makes the calling test FAIL with a hint,
 * never skip.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';

export const OAUTHLIB_PYTHON = process.env.OAUTHLIB_PYTHON ?? '/usr/bin/python3';
const ORACLE = join(__dirname, 'oauthlib-oracle.py');
const HINT =
  'install it with: bash scripts/ensure-test-tools.sh (apt-get install python3-oauthlib)';

export interface OauthlibCase {
  readonly url: string;
  readonly consumerKey: string;
  /** Consumer secret (the merchant control key); the token secret is empty. */
  readonly secret: string;
  /** Form body parameters in order; repeated names allowed. */
  readonly params: ReadonlyArray<readonly [string, string]>;
  /** Fixed nonce/timestamp, or oauthlib's own (random nonce, current time). */
  readonly nonce?: string;
  readonly timestamp?: string;
}

export interface OauthlibSigned {
  /** Base64 HMAC-SHA1 (un-encoded). */
  readonly signature: string;
  /** The `Authorization` header value oauthlib rendered. */
  readonly authorization: string;
  /** The form body as oauthlib sends it (urllib `urlencode`: `+` for spaces). */
  readonly body: string;
  /** The base string oauthlib signed. */
  readonly baseString: string;
}

function run(args: readonly string[], input?: string): string {
  const r = spawnSync(OAUTHLIB_PYTHON, args, {
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw new Error(`cannot run ${OAUTHLIB_PYTHON}: ${r.error.message}; ${HINT}`);
  if (r.status !== 0) {
    throw new Error(
      `${OAUTHLIB_PYTHON} ${args.join(' ')} exited ${r.status}: ${r.stderr}; ${HINT}`,
    );
  }
  return r.stdout;
}

/** oauthlib's version string; throws (failing the test) when python3 or oauthlib is missing. */
export function oauthlibVersion(): string {
  return run(['-c', 'import oauthlib; print(oauthlib.__version__)']).trim();
}

/** Signs every case with oauthlib in one interpreter run. */
export function oauthlibSign(cases: readonly OauthlibCase[]): OauthlibSigned[] {
  const out = JSON.parse(run([ORACLE], JSON.stringify(cases))) as OauthlibSigned[];
  if (out.length !== cases.length) throw new Error('oauthlib oracle returned a short result');
  return out;
}

// ------------------------------------------------------------------ case generators

/**
 * Characters for which a verbatim and a percent-encoded key differ (reserved, `%`, space, quotes),
 * non-ASCII (2-, 3- and 4-byte UTF-8, NBSP, NUL), and unreserved ones.
 */
export const OAUTH_SPECIAL_CHARS: readonly string[] = Array.from(
  ' &%+=/?#:;,!*\'()[]@$"<>\\^`{|}é€ßñ日本😀\u00a0\u0000-._~AZaz09',
);

/** Control keys: special characters, arbitrary unicode, or the usual upper-case UUID. */
export const oauthKeyArb = (minLength = 1): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: fc.constantFrom(...OAUTH_SPECIAL_CHARS), minLength, maxLength: 24 }),
    fc.string({ unit: 'binary', minLength, maxLength: 24 }),
    fc.uuid().map((u) => u.toUpperCase()),
  );

/**
 * Form parameters as pairs: names from a small pool (so names repeat) or random, never `oauth_*`
 * or `__proto__`, nor one of `exclude`; values special or arbitrary unicode, possibly empty.
 */
export const oauthParamsArb = (
  exclude: readonly string[] = [],
): fc.Arbitrary<Array<[string, string]>> => {
  const name = fc
    .oneof(
      fc.constantFrom('amount', 'client_orderid', 'a', 'a b', 'é', 'x[]'),
      fc.string({ unit: fc.constantFrom(...OAUTH_SPECIAL_CHARS), minLength: 1, maxLength: 8 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
    )
    .filter((n) => !n.startsWith('oauth_') && n !== '__proto__' && !exclude.includes(n));
  const value = fc.oneof(
    fc.string({ unit: fc.constantFrom(...OAUTH_SPECIAL_CHARS), maxLength: 16 }),
    fc.string({ unit: 'binary', maxLength: 16 }),
  );
  return fc.array(fc.tuple(name, value), { maxLength: 8 });
};

/** True when percent-encoding changes the key (the cases where a verbatim key was wrong). */
export function keyNeedsEncoding(key: string): boolean {
  return encodeURIComponent(key) !== key || /[!'()*]/.test(key);
}
