#!/usr/bin/env bash
# Installs the system tools the integration tests need, and nothing else; run by
# scripts/with-infra.sh before every integration/e2e run (so `npm test` stays the one command).
# Idempotent and quick: when everything is present it only checks (≈ 50 ms).
#
#   - python3-oauthlib: Python's oauthlib, the independent OAuth 1.0a implementation the signing
#     interop tests compare against (test/support/oauthlib.ts). Checked with the interpreter the
#     tests use: OAUTHLIB_PYTHON, default /usr/bin/python3 (where the Debian package installs; a
#     pyenv or venv python3 earlier on PATH would not see it).
#   - chromium + chromium-driver: the headless browser the payer-facing e2e tests
#     (test/e2e/browser*.e2e-spec.ts) and the demo's 3-D Secure part drive through playwright-core
#     (an npm devDependency that never downloads a browser of its own) at /usr/bin/chromium.
#   - postgresql-15 + postgresql-15-auto-failover + pg-auto-failover-cli: the replicated
#     PostgreSQL of the failover suite (deploy/local/postgres-ha/pg-ha.sh, run by `npm test` beside
#     the integration tier). Installed here, once, before any suite starts: pg-ha.sh would install
#     it too, but two clusters starting at once (the failover suite, the chaos run) would then
#     race for dpkg's lock.
#
# Installing needs apt-get and root (CI and the dev machines run as root); otherwise the script
# stops with the command to run. Set ENSURE_TEST_TOOLS=skip to bypass (the tests that need a tool
# then fail, they never skip).
set -euo pipefail

say() { printf '[ensure-test-tools] %s\n' "$*"; }
die() {
  printf '[ensure-test-tools] ERROR: %s\n' "$*" >&2
  exit 1
}

[[ "${ENSURE_TEST_TOOLS:-}" == skip ]] && exit 0

PY="${OAUTHLIB_PYTHON:-/usr/bin/python3}"
has_oauthlib() { [[ -x "$PY" ]] && "$PY" -c 'import oauthlib' 2>/dev/null; }
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
has_chromium() { [[ -x "$CHROMIUM" ]] && command -v chromedriver >/dev/null; }
PG_BIN="${PG_HA_PG_BIN:-/usr/lib/postgresql/15/bin}"
has_pg_auto_failover() { command -v pg_autoctl >/dev/null && [[ -x "$PG_BIN/pg_ctl" ]]; }

missing=()
has_oauthlib || missing+=(python3-oauthlib)
has_chromium || missing+=(chromium chromium-driver)
has_pg_auto_failover || missing+=(postgresql-15 postgresql-15-auto-failover pg-auto-failover-cli)
((${#missing[@]} == 0)) && exit 0

command -v apt-get >/dev/null || die "missing: ${missing[*]} and apt-get is not available (Debian: apt-get install -y ${missing[*]})"
if [[ "$(id -u)" -ne 0 ]]; then
  die "missing: ${missing[*]}; run as root: apt-get update && apt-get install -y ${missing[*]}"
fi
say "installing ${missing[*]} (apt-get update first)"
export DEBIAN_FRONTEND=noninteractive
# An install killed half way (an interrupted earlier run) leaves dpkg refusing every further
# install until its configuration step is finished: finish it first (a no-op otherwise).
# Another install running at the same time (a second checkout's tests, pg-ha.sh) holds dpkg's
# lock: wait for it rather than fail.
lock=(-o DPkg::Lock::Timeout=300)
dpkg --configure -a >/dev/null
apt-get "${lock[@]}" update -qq
apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
has_oauthlib || die "installed python3-oauthlib but $PY still cannot import oauthlib (set OAUTHLIB_PYTHON to the interpreter it installed for)"
has_chromium || die "installed chromium but $CHROMIUM or chromedriver is still missing (set CHROMIUM_PATH)"
has_pg_auto_failover || die "installed pg_auto_failover but pg_autoctl or $PG_BIN/pg_ctl is still missing (set PG_HA_PG_BIN)"
say "ready: $("$PY" -c 'import oauthlib; print("oauthlib", oauthlib.__version__)'), $("$CHROMIUM" --version 2>/dev/null || echo chromium), $(pg_autoctl --version 2>/dev/null | head -n1)"
