"""Independent OAuth 1.0a HMAC-SHA1 oracle for the tests: Python's oauthlib (Debian package
python3-oauthlib, installed by scripts/ensure-test-tools.sh). Reads a JSON array of cases on stdin,
writes a JSON array of results on stdout, one per case, in order.

Case:   {"url", "consumerKey", "secret", "params": [[name, value], ...], "nonce"?, "timestamp"?}
Result: {"signature", "authorization", "body", "baseString"}

oauthlib builds everything itself: parameter collection from the form body (repeated names kept),
RFC 3986 encoding, sorting, the base string, and the HMAC key
percent-encode(consumer secret) & percent-encode(token secret) (RFC 5849 section 3.4.2).
"""
import json
import sys
from urllib.parse import urlencode, urlparse

from oauthlib.common import Request
from oauthlib.oauth1 import SIGNATURE_HMAC_SHA1, SIGNATURE_TYPE_AUTH_HEADER, Client
from oauthlib.oauth1.rfc5849 import signature as sig

FORM = "application/x-www-form-urlencoded"


def sign(case):
    client = Client(
        case["consumerKey"],
        client_secret=case["secret"],
        signature_method=SIGNATURE_HMAC_SHA1,
        signature_type=SIGNATURE_TYPE_AUTH_HEADER,
        nonce=case.get("nonce"),
        timestamp=case.get("timestamp"),
    )
    # A form-encoded string (urllib: quote_plus, UTF-8), not a list: oauthlib turns a list of
    # pairs into a dict and would drop repeated names.
    form = urlencode([(name, value) for name, value in case["params"]])
    uri, headers, body = client.sign(
        case["url"], http_method="POST", body=form, headers={"Content-Type": FORM}
    )
    authorization = headers["Authorization"]
    # The base string oauthlib signed, rebuilt from the signed request with oauthlib's own helpers
    # (for diagnostics when a signature differs).
    signed = Request(uri, "POST", body, headers)
    collected = sig.collect_parameters(
        uri_query=urlparse(uri).query,
        body=signed.body,
        headers=signed.headers,
        exclude_oauth_signature=True,
    )
    base = sig.signature_base_string(
        "POST", sig.base_string_uri(uri), sig.normalize_parameters(collected)
    )
    oauth = dict(
        (name, value)
        for name, value in sig.collect_parameters(headers=signed.headers, exclude_oauth_signature=False)
    )
    return {
        "signature": oauth["oauth_signature"],
        "authorization": authorization,
        "body": body or "",
        "baseString": base,
    }


def main():
    cases = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    json.dump([sign(case) for case in cases], sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
