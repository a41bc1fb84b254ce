#!/usr/bin/env bash
# A replicated PostgreSQL 15 for local runs and the failover tests, without Docker: a
# pg_auto_failover monitor, a primary and a streaming standby on this machine, from Debian's
# packages (postgresql-15 + postgresql-15-auto-failover), with automatic failover by the monitor
# and synchronous replication as pg_auto_failover sets it (the standby's replication-quorum true:
# synchronous_standby_names = 'ANY 1 (...)', synchronous_commit = on).
#
#   bash deploy/local/postgres-ha/pg-ha.sh start [--async] | stop [--wipe] | status | uri
#   bash deploy/local/postgres-ha/pg-ha.sh failover        # a planned switchover (the monitor's)
#   bash deploy/local/postgres-ha/pg-ha.sh kill-primary    # SIGKILL the primary's keeper + postmaster
#   bash deploy/local/postgres-ha/pg-ha.sh rejoin N        # restart node N's keeper (rejoins as standby)
#   bash deploy/local/postgres-ha/pg-ha.sh heal            # every node back, wait for primary + secondary
#   bash deploy/local/postgres-ha/pg-ha.sh pause-replication | resume-replication
#                                         # a standby left behind (SIGSTOP/SIGCONT of the primary's WAL senders)
#   bash deploy/local/postgres-ha/pg-ha.sh primary         # prints the current primary's port
#   bash deploy/local/postgres-ha/pg-ha.sh set-async | set-sync
#
# Ports (never the machine's 5432): monitor PG_HA_PORT (default 25431), node N on PG_HA_PORT+N.
# Everything runs as the `postgres` OS user (initdb refuses root) in a state directory of its
# own, PG_HA_STATE_DIR (default /tmp/payments-pg-ha/<PG_HA_PORT>: the postgres user must be able
# to traverse every parent, which a checkout under /root or /work need not allow); the
# pg_autoctl configuration lives there too (XDG_* point into it), so nothing touches the
# machine's own cluster or ~postgres.
#
# `start` installs what is missing (apt-get, as root, as scripts/ensure-test-tools.sh does),
# starts from a fresh state, waits until the standby is a synchronous secondary, and prints the
# multi-host URL the apps use (target_session_attrs=read-write). A failed start stops what it
# started. `--async` (or `set-async`) turns the standby's replication-quorum off: asynchronous
# replication, for the measurement in docs/decisions.md only.
#
# The monitor's failure detection is shortened for tests (PG_HA_UNHEALTHY_TIMEOUT_MS, default
# 5000, instead of pg_auto_failover's 20 s), and so is the time it gives a lost primary to demote
# itself before the standby is promoted (PG_HA_DEMOTE_TIMEOUT_MS, default 5000, instead of 30 s;
# an unreachable old primary cannot acknowledge a commit meanwhile: synchronous replication waits
# for the standby, which stopped replicating): a killed primary is failed over in seconds.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BASE_PORT="${PG_HA_PORT:-25431}"
STATE="${PG_HA_STATE_DIR:-/tmp/payments-pg-ha/$BASE_PORT}"
START_TIMEOUT="${PG_HA_START_TIMEOUT:-120}"
UNHEALTHY_MS="${PG_HA_UNHEALTHY_TIMEOUT_MS:-5000}"
DEMOTE_MS="${PG_HA_DEMOTE_TIMEOUT_MS:-5000}"
PG_BIN="${PG_HA_PG_BIN:-/usr/lib/postgresql/15/bin}"
HOST=127.0.0.1
NODES=2
MONITOR_PORT="$BASE_PORT"
MONITOR_URI="postgres://autoctl_node@$HOST:$MONITOR_PORT/pg_auto_failover?sslmode=disable"

say() { printf '[pg-ha] %s\n' "$*" >&2; }
die() {
  printf '[pg-ha] ERROR: %s\n' "$*" >&2
  exit 1
}

node_port() { echo $((BASE_PORT + $1)); }
node_dir() { echo "$STATE/node$1"; }

# Runs a command as the postgres OS user with pg_autoctl's configuration kept in STATE.
as_pg() {
  runuser -u postgres -- env PATH="$PG_BIN:/usr/bin:/bin" \
    XDG_CONFIG_HOME="$STATE/xdg/config" XDG_DATA_HOME="$STATE/xdg/data" \
    XDG_RUNTIME_DIR="$STATE/xdg/run" PG_CONFIG="$PG_BIN/pg_config" "$@"
}

ensure_installed() {
  if command -v pg_autoctl >/dev/null && [[ -x "$PG_BIN/pg_ctl" ]]; then return 0; fi
  local pkgs=(postgresql-15 postgresql-15-auto-failover pg-auto-failover-cli)
  command -v apt-get >/dev/null || die "missing pg_autoctl and apt-get is not available (Debian: apt-get install -y ${pkgs[*]})"
  [[ "$(id -u)" -eq 0 ]] || die "missing pg_autoctl; run as root: apt-get update && apt-get install -y ${pkgs[*]}"
  say "installing ${pkgs[*]} (apt-get update first)"
  export DEBIAN_FRONTEND=noninteractive
  dpkg --configure -a >/dev/null
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  command -v pg_autoctl >/dev/null || die "installed ${pkgs[*]} but pg_autoctl is still missing"
}

require_root() { [[ "$(id -u)" -eq 0 ]] || die "run as root (it runs PostgreSQL as the postgres user)"; }

keeper_pid_file() { echo "$STATE/$1.keeper.pid"; }

# The keeper's pid if it is still running (guards against a recycled pid).
keeper_pid() {
  local file pid
  file="$(keeper_pid_file "$1")"
  [[ -f "$file" ]] || return 1
  pid="$(cat "$file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "pg_autoctl" || return 1
  echo "$pid"
}

postmaster_pid() {
  local file="$1/postmaster.pid" pid
  [[ -f "$file" ]] || return 1
  pid="$(head -n1 "$file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# Starts `pg_autoctl run` for a created node (name monitor|node1|node2) in the background.
run_keeper() {
  local name="$1" dir="$STATE/$1"
  # setsid: the keeper leads a process group of its own (its supervisor children included), so
  # kill-primary and stop reach all of it with one signal to the group.
  as_pg bash -c "setsid nohup pg_autoctl run --pgdata '$dir' >>'$STATE/$name.log' 2>&1 & echo \$!" \
    >"$(keeper_pid_file "$name")"
}

monitor_sql() {
  as_pg "$PG_BIN/psql" -X -q -A -t -h "$HOST" -p "$MONITOR_PORT" -d pg_auto_failover -c "$1"
}

# The reported state of node N (e.g. primary, secondary, wait_primary, catchingup), or empty.
node_state() {
  monitor_sql "SELECT reportedstate FROM pgautofailover.node WHERE nodename = 'node$1'" 2>/dev/null || true
}

wait_for() {
  local what="$1" deadline=$((SECONDS + START_TIMEOUT))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || die "timed out after ${START_TIMEOUT}s waiting for $what (logs: $STATE/*.log)"
    sleep 0.5
  done
}

monitor_ready() { monitor_sql 'SELECT 1' >/dev/null 2>&1; }
node_is() { [[ "$(node_state "$1")" == "$2" ]]; }
both_sync() { node_is 1 primary && node_is 2 secondary || { node_is 2 primary && node_is 1 secondary; }; }
# both_sync, and meanwhile a CHECKPOINT on the primary every 5 s: a lost node whose pg_rewind fails
# (PostgreSQL 15: "standby mode is not supported by single-user servers") falls back to
# pg_basebackup, which pg_autoctl runs without --checkpoint=fast, so it waits for the primary's
# next spread checkpoint (up to checkpoint_timeout, 5 min) — past our wait. An explicit
# CHECKPOINT makes that checkpoint immediate (seen in the chaos run: 3 of 4 rejoins timed out).
last_nudge=0
both_sync_nudging() {
  both_sync && return 0
  if ((SECONDS - last_nudge >= 5)); then
    last_nudge=$SECONDS
    primary_sql 'CHECKPOINT' >/dev/null 2>&1 || true
  fi
  return 1
}

uri() {
  local hosts="" n
  for n in $(seq 1 "$NODES"); do hosts="${hosts:+$hosts,}$HOST:$(node_port "$n")"; done
  echo "postgres://postgres@$hosts/postgres?target_session_attrs=read-write"
}

create_node() {
  local n="$1"
  as_pg pg_autoctl create postgres --pgdata "$(node_dir "$n")" --pgport "$(node_port "$n")" \
    --pgctl "$PG_BIN/pg_ctl" --hostname "$HOST" --listen "$HOST" --name "node$n" --auth trust --no-ssl \
    --username postgres --dbname postgres --monitor "$MONITOR_URI" \
    >>"$STATE/node$n.log" 2>&1 || die "pg_autoctl create postgres (node$n) failed: $STATE/node$n.log"
  # Client connections over TCP from this machine (the apps, the tests): trust, like the
  # machine's own test server. pg_autoctl wrote its replication and monitor rules already.
  echo "host all all $HOST/32 trust" >>"$(node_dir "$n")/pg_hba.conf"
  run_keeper "node$n"
}

start() {
  require_root
  ensure_installed
  local async=0
  [[ "${1:-}" == --async ]] && async=1
  local n
  for n in 0 1 2; do
    if (exec 3<>"/dev/tcp/$HOST/$((BASE_PORT + n))") 2>/dev/null; then
      die "port $((BASE_PORT + n)) is in use (another pg-ha? 'pg-ha.sh stop', or set PG_HA_PORT)"
    fi
  done
  stop --wipe >/dev/null 2>&1 || true
  STARTED=0
  trap '((${STARTED:-1} == 1)) || { say "start failed: stopping what was started"; tail -n 15 "$STATE"/*.log >&2 || true; stop >/dev/null 2>&1 || true; }' EXIT
  mkdir -p "$STATE/xdg/config" "$STATE/xdg/data" "$STATE/xdg/run"
  chmod 700 "$STATE/xdg/run"
  touch "$STATE/monitor.log" "$STATE/node1.log" "$STATE/node2.log"
  chown -R postgres:postgres "$STATE"
  say "monitor on $HOST:$MONITOR_PORT"
  as_pg pg_autoctl create monitor --pgdata "$STATE/monitor" --pgport "$MONITOR_PORT" \
    --pgctl "$PG_BIN/pg_ctl" --hostname "$HOST" --auth trust --no-ssl \
    >>"$STATE/monitor.log" 2>&1 || die "pg_autoctl create monitor failed: $STATE/monitor.log"
  run_keeper monitor
  wait_for "the monitor" monitor_ready
  # Detect a lost node in seconds rather than pg_auto_failover's 20 s (tests, the demo).
  monitor_sql "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = '${UNHEALTHY_MS}ms'" >/dev/null
  monitor_sql "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = '${DEMOTE_MS}ms'" >/dev/null
  monitor_sql "ALTER SYSTEM SET pgautofailover.health_check_period = '1s'" >/dev/null
  monitor_sql "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = '1s'" >/dev/null
  monitor_sql "ALTER SYSTEM SET pgautofailover.health_check_timeout = '1s'" >/dev/null
  monitor_sql "SELECT pg_reload_conf()" >/dev/null
  say "node1 on $HOST:$(node_port 1)"
  create_node 1
  wait_for "node1 to be primary" node_is 1 single
  say "node2 on $HOST:$(node_port 2) (standby: base backup)"
  create_node 2
  wait_for "node1 primary and node2 secondary" both_sync
  if ((async == 1)); then set_quorum false; fi
  STARTED=1
  say "ready ($( ((async == 1)) && echo asynchronous || echo synchronous) replication); URL:"
  uri
}

# replication-quorum of the standby(s): true = synchronous, false = asynchronous.
set_quorum() {
  local n
  for n in $(seq 1 "$NODES"); do
    as_pg pg_autoctl set node replication-quorum "$1" --pgdata "$(node_dir "$n")" >>"$STATE/node$n.log" 2>&1 || true
  done
  sleep 1
  say "synchronous_standby_names on the primary: $(primary_sql 'SHOW synchronous_standby_names' || echo '?')"
}

primary_port() {
  monitor_sql "SELECT nodeport FROM pgautofailover.node WHERE reportedstate IN ('primary','single','wait_primary') AND goalstate IN ('primary','single','wait_primary') ORDER BY nodeid LIMIT 1"
}

primary_sql() {
  local port
  port="$(primary_port)"
  [[ -n "$port" ]] || return 1
  as_pg "$PG_BIN/psql" -X -q -A -t -h "$HOST" -p "$port" -d postgres -c "$1"
}

stop() {
  local wipe=0 name pid
  [[ "${1:-}" == --wipe ]] && wipe=1
  resume_replication >/dev/null 2>&1 || true
  # Keepers first (they would restart their postgres), then any postmaster left.
  for name in node2 node1 monitor; do
    if pid="$(keeper_pid "$name")"; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  local deadline=$((SECONDS + 30))
  for name in node2 node1 monitor; do
    while pid="$(keeper_pid "$name")" && ((SECONDS < deadline)); do sleep 0.2; done
    if pid="$(keeper_pid "$name")"; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
    rm -f "$(keeper_pid_file "$name")"
    if [[ -d "$STATE/$name" ]] && pid="$(postmaster_pid "$STATE/$name")"; then
      as_pg "$PG_BIN/pg_ctl" stop -D "$STATE/$name" -m immediate >/dev/null 2>&1 || kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  if ((wipe == 1)); then rm -rf "$STATE"; fi
  say "stopped$( ((wipe == 1)) && echo ' and wiped' || true)"
}

status() {
  if ! monitor_ready; then
    say "monitor not running ($HOST:$MONITOR_PORT)"
    return 1
  fi
  as_pg pg_autoctl show state --pgdata "$STATE/monitor"
  uri
}

# SIGKILL of the primary's keeper and postmaster: the node is gone (a lost machine), not restarted
# by its keeper; the monitor fails over to the standby. `rejoin N` brings it back as a standby.
kill_primary() {
  local port n
  port="$(primary_port)"
  [[ -n "$port" ]] || die "no primary known to the monitor"
  n=$((port - BASE_PORT))
  local kpid ppid
  kpid="$(keeper_pid "node$n" || true)"
  ppid="$(postmaster_pid "$(node_dir "$n")" || true)"
  # The keeper's whole process group (its supervisor children too), then the postmaster, and WAL
  # senders paused by pause-replication (a stopped process would not notice the postmaster's death).
  [[ -n "$kpid" ]] && kill -KILL -- "-$kpid" 2>/dev/null || true
  if [[ -f "$STATE/walsenders.stopped" ]]; then
    # shellcheck disable=SC2046
    kill -KILL $(cat "$STATE/walsenders.stopped") 2>/dev/null || true
    rm -f "$STATE/walsenders.stopped"
  fi
  [[ -n "$ppid" ]] && kill -KILL "$ppid" 2>/dev/null || true
  say "killed node$n (port $port): keeper ${kpid:-?}, postmaster ${ppid:-?}"
  echo "$n"
}

# The primary's WAL sender processes (one per standby).
walsender_pids() {
  local port n pm
  port="$(primary_port)"
  [[ -n "$port" ]] || die "no primary known to the monitor"
  n=$((port - BASE_PORT))
  pm="$(postmaster_pid "$(node_dir "$n")")" || die "node$n's postmaster is not running"
  pgrep -P "$pm" -f 'walsender' || true
}

# A standby that falls behind (a slow or partitioned network): SIGSTOP of the primary's WAL
# senders, so WAL written meanwhile does not leave the primary. Synchronous commits wait for the
# standby; asynchronous ones are acknowledged without it — and are lost if the primary dies now
# (kill-primary SIGKILLs the paused senders too). `resume-replication` sends SIGCONT.
pause_replication() {
  local pids
  pids="$(walsender_pids)"
  [[ -n "$pids" ]] || die "no WAL sender found on the primary"
  # shellcheck disable=SC2086
  kill -STOP $pids
  echo "$pids" >"$STATE/walsenders.stopped"
  say "primary's WAL senders paused: $(echo $pids)"
}

resume_replication() {
  local file="$STATE/walsenders.stopped"
  [[ -f "$file" ]] || return 0
  # shellcheck disable=SC2046
  kill -CONT $(cat "$file") 2>/dev/null || true
  rm -f "$file"
  say "WAL senders resumed"
}

# Every node running again (a killed one rejoins as a standby), then waits until one is primary
# and the other a synchronous secondary: a test's starting point after an earlier kill.
heal() {
  local n
  for n in $(seq 1 "$NODES"); do
    keeper_pid "node$n" >/dev/null || run_keeper "node$n"
  done
  wait_for "a primary and a secondary" both_sync_nudging
  say "healed: $(primary_port) is primary"
}

rejoin() {
  local n="$1"
  [[ "$n" =~ ^[1-2]$ ]] || die "node must be 1 or 2"
  keeper_pid "node$n" >/dev/null && die "node$n is running"
  run_keeper "node$n"
  say "node$n keeper restarted: it rejoins as a standby (pg_rewind)"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  start) start "$@" ;;
  stop) stop "$@" ;;
  status) status ;;
  uri) uri ;;
  primary) primary_port ;;
  failover) as_pg pg_autoctl perform failover --pgdata "$STATE/monitor" ;;
  kill-primary) kill_primary ;;
  rejoin) rejoin "$@" ;;
  heal) heal ;;
  pause-replication) pause_replication ;;
  resume-replication) resume_replication ;;
  set-async) set_quorum false ;;
  set-sync) set_quorum true ;;
  *) die "usage: $0 start [--async] | stop [--wipe] | status | uri | primary | failover | kill-primary | rejoin N | heal | pause-replication | resume-replication | set-async | set-sync" ;;
esac
