#!/usr/bin/env bash
# Runs CMD against a replicated PostgreSQL (deploy/local/postgres-ha/pg-ha.sh: pg_auto_failover
# monitor, primary, synchronous standby; installed with apt-get when missing), started fresh on
# PG_HA_PORT (default: the first free of 25431, 25441, ...), and always stopped and wiped
# afterwards (also on failure or Ctrl-C). Exports for CMD:
#   DATABASE_HA_URL  the multi-host URL (target_session_attrs=read-write)
#   PG_HA_PORT       the monitor's port (pg-ha.sh kill-primary / rejoin / status act on it)
# PG_HA_ASYNC=1 starts it with asynchronous replication (the measurement in docs/decisions.md).
#
#   bash scripts/with-pg-ha.sh npx jest --selectProjects failover --runInBand
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_HA="$ROOT/deploy/local/postgres-ha/pg-ha.sh"
(($# > 0)) || {
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 1
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port="${PG_HA_PORT:-25431}"
while port_open "$port" || port_open $((port + 1)) || port_open $((port + 2)); do
  port=$((port + 10))
done
export PG_HA_PORT="$port"
trap 'bash "$PG_HA" stop --wipe || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
DATABASE_HA_URL="$(bash "$PG_HA" start $([[ "${PG_HA_ASYNC:-}" == 1 ]] && echo --async))"
export DATABASE_HA_URL
printf '[with-pg-ha] %s\n' "DATABASE_HA_URL=$DATABASE_HA_URL" >&2
# CMD in the background so that a signal to this script is handled at once (bash defers traps
# while a foreground child runs): it is forwarded to CMD, then the EXIT trap stops the cluster.
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
exit "$rc"
