#!/usr/bin/env bash
# Runs CMD with the infrastructure the integration and e2e tests need:
#   - Kafka: if KAFKA_BROKERS is set, that broker is used as is; otherwise KAFKA_BROKER_COUNT
#     (default 1) throw-away local brokers are started at once with deploy/local/kafka/kafka.sh on
#     test ports (from KAFKA_PORT / KAFKA_CONTROLLER_PORT, default 19092/19093, each on the next
#     free pair) with fresh storage; KAFKA_BROKERS (the first) and KAFKA_WORKER_BROKERS (all of
#     them, space-separated: jest worker N uses the Nth, test/setup/worker-broker-environment.ts)
#     are exported for CMD, and the brokers are always stopped and their data removed afterwards
#     (also on failure or Ctrl-C). One broker per jest worker, because the apps' consumer groups
#     and topics have fixed names: two stacks on one broker would take each other's messages.
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
  count="${KAFKA_BROKER_COUNT:-1}"
  [[ "$count" =~ ^[1-9][0-9]*$ ]] || die "KAFKA_BROKER_COUNT must be a positive number, not '$count'"
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
  # Every port a broker was started on (or tried) is written to $dir/<broker>.tried: always stop
  # those brokers, whatever happens to CMD.
  dir="$(mktemp -d)"
  cleanup() {
    local p
    for p in $(cat "$dir"/*.tried 2>/dev/null); do
      KAFKA_PORT="$p" KAFKA_CONTROLLER_PORT="$((p + 1))" bash "$KAFKA_SH" stop --wipe || true
    done
    rm -rf "$dir"
  }
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # One free pair per broker (the given one for the first when KAFKA_PORT is set), then all of
  # them started at once: a JVM's start-up is mostly waiting. A pair taken between the check and
  # the bind is retried (not when ports were given) COUNT pairs further on, off the others' pairs.
  firsts=()
  first_controller="$controller"
  for ((i = 0; i < count; i++)); do
    ((i == 0)) && [[ -n "$KAFKA_PORT_GIVEN" ]] || next_free_pair
    ((i > 0)) || first_controller="$controller"
    firsts+=("$port")
    port=$((port + 2))
    controller=$((port + 1))
  done
  # $1: client port, $2: controller port, $3: this broker's number.
  start_broker() {
    local p="$1" c="$2" attempt
    for attempt in 1 2 3; do
      if ((attempt > 1)); then
        [[ -z "$KAFKA_PORT_GIVEN" ]] || return 1
        p=$((p + 2 * count))
        c=$((p + 1))
        echo "[with-infra] retrying on the port pair $p/$c"
      fi
      echo "$p" >>"$dir/$3.tried"
      KAFKA_PORT="$p" KAFKA_CONTROLLER_PORT="$c" bash "$KAFKA_SH" start --fresh &&
        echo "$p" >"$dir/$3.port" && return 0
    done
    return 1
  }
  pids=()
  for ((i = 0; i < count; i++)); do
    c=$((firsts[i] + 1))
    ((i > 0)) || c="$first_controller"
    start_broker "${firsts[$i]}" "$c" "$i" >"$dir/$i.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  brokers=""
  for ((i = 0; i < count; i++)); do
    wait "${pids[$i]}" || failed=1
    cat "$dir/$i.log"
    [[ -f "$dir/$i.port" ]] && brokers="${brokers:+$brokers }127.0.0.1:$(cat "$dir/$i.port")"
  done
  ((failed == 0)) || die "a broker did not start (see above)"
  first="${brokers%% *}"
  KAFKA_PORT="${first##*:}"
  KAFKA_CONTROLLER_PORT=$((KAFKA_PORT + 1))
  [[ "$KAFKA_PORT" != "${firsts[0]}" ]] || KAFKA_CONTROLLER_PORT="$first_controller"
  export KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_BROKERS="$first" KAFKA_WORKER_BROKERS="$brokers"
  say "KAFKA_WORKER_BROKERS=$KAFKA_WORKER_BROKERS"
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
