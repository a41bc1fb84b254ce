#!/usr/bin/env bash
# Runs CMD with the infrastructure the integration and e2e tests need:
#   - Kafka: if KAFKA_BROKERS is set, that broker is used as is; otherwise a throw-away local
#     broker is started with deploy/local/kafka/kafka.sh on test ports (KAFKA_PORT /
#     KAFKA_CONTROLLER_PORT, default 19092/19093, or the next free pair) with fresh storage,
#     KAFKA_BROKERS is exported for CMD, and the broker is always stopped and its data removed
#     afterwards (also on failure or Ctrl-C).
#   - PostgreSQL: the machine's server at DATABASE_URL's host and port (default 127.0.0.1:5432)
#     must accept connections; it is only checked, never started.
#   - System test tools (python3-oauthlib for the OAuth interop tests): installed by
#     scripts/ensure-test-tools.sh when missing (apt-get, as root); only checked when present.
# CMD's exit code is propagated.
#
#   bash scripts/with-infra.sh npx jest --selectProjects integration e2e --runInBand
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KAFKA_SH="$ROOT/deploy/local/kafka/kafka.sh"

say() { printf '[with-infra] %s\n' "$*"; }
die() {
  printf '[with-infra] ERROR: %s\n' "$*" >&2
  exit 1
}

(($# > 0)) || die "usage: $0 CMD [ARGS...]"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

check_postgres() {
  local url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
  local host port
  read -r host port < <(node -e '
    try {
      const u = new URL(process.argv[1]);
      console.log(u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1", u.port || "5432");
    } catch { console.log("127.0.0.1 5432"); }' "$url")
  local ok=1
  if command -v pg_isready >/dev/null; then
    pg_isready -q -h "$host" -p "$port" -t 5 && ok=0
  else
    node -e '
      const net = require("node:net");
      const s = net.connect({ host: process.argv[1], port: Number(process.argv[2]) });
      s.setTimeout(5000, () => process.exit(1));
      s.on("connect", () => { s.end(); process.exit(0); });
      s.on("error", () => process.exit(1));' "$host" "$port" && ok=0
  fi
  ((ok == 0)) || die "PostgreSQL is not reachable at $host:$port (from DATABASE_URL, default 127.0.0.1:5432). Start the local server (e.g. 'service postgresql start') or set DATABASE_URL."
  say "PostgreSQL reachable at $host:$port"
}

check_postgres
bash "$ROOT/scripts/ensure-test-tools.sh"

if [[ -n "${KAFKA_BROKERS:-}" ]]; then
  say "using the broker(s) in KAFKA_BROKERS=$KAFKA_BROKERS"
else
  KAFKA_PORT_GIVEN="${KAFKA_PORT:-}"
  # Below the kernel's ephemeral range (32768-60999 here): a port inside it can be held by any
  # outgoing connection at the moment the broker binds, which a "nobody listens" check misses.
  port="${KAFKA_PORT:-19092}"
  controller="${KAFKA_CONTROLLER_PORT:-$((port + 1))}"
  next_free_pair() {
    local tries=0
    while port_open "$port" || port_open "$controller"; do
      tries=$((tries + 1))
      ((tries < 50)) || die "no free port pair found from ${KAFKA_PORT:-19092} upwards"
      port=$((port + 2))
      controller=$((port + 1))
    done
  }
  [[ -n "${KAFKA_PORT:-}" ]] || next_free_pair
  # Always stop the broker we start, whatever happens to CMD.
  cleanup() { bash "$KAFKA_SH" stop --wipe || true; }
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  attempt=1
  while true; do
    export KAFKA_PORT="$port" KAFKA_CONTROLLER_PORT="$controller"
    bash "$KAFKA_SH" start --fresh && break
    # A pair taken between the check and the bind: try the next one (not when ports were given).
    [[ -z "${KAFKA_PORT_GIVEN:-}" && $attempt -lt 3 ]] || die "the broker did not start (see above)"
    attempt=$((attempt + 1))
    say "retrying on the next port pair"
    port=$((port + 2))
    controller=$((port + 1))
    next_free_pair
  done
  export KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"
fi

say "running: $*"
# CMD runs in the background so that a signal to this script is handled at once (bash defers
# traps while a foreground child runs): it is forwarded to CMD, then the EXIT trap stops the broker.
"$@" &
child=$!
forward() {
  kill -TERM "$child" 2>/dev/null || true
  wait "$child" 2>/dev/null || true
  exit "$1"
}
trap 'forward 130' INT
trap 'forward 143' TERM
rc=0
wait "$child" || rc=$?
say "command exited with $rc"
exit "$rc"
