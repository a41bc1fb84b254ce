#!/usr/bin/env bash
# A real Apache Kafka 3.9.2 broker (KRaft, combined broker+controller) for local runs and tests,
# from Maven Central jars and `java` — no Docker. Recipe: shared reference/kafka-broker.md.
#
#   bash deploy/local/kafka/kafka.sh start [--fresh] | stop [--wipe] | kill | wipe | status
#   bash deploy/local/kafka/kafka.sh cluster-start [--fresh] | cluster-stop [--wipe] | cluster-status
#   bash deploy/local/kafka/kafka.sh cluster-node-start N | cluster-node-stop N | cluster-node-kill N
#
# Single node (start/stop): one JVM on KAFKA_PORT. Cluster: three JVMs (node ids 1-3, each
# broker+controller, a three-voter quorum) on KAFKA_CLUSTER_PORT, +2, +4 (controllers on the
# next port of each), replication factor 3 and min.insync.replicas=2 by default.
#
# Data is KEPT across stop/start (and across a crash): a restarted broker has every topic, offset
# and committed group offset it had. `start --fresh` / `cluster-start --fresh` wipe it first;
# `stop --wipe`, `cluster-stop --wipe` and `wipe` remove it. `kill` / `cluster-node-kill N` send
# SIGKILL (crash tests); `cluster-node-stop N` sends SIGTERM to one node.
#
# Environment (all optional):
#   KAFKA_BROKERS          if set, `start` does nothing: that broker is used instead
#   KAFKA_PORT             client port of the single node             (default 9092)
#   KAFKA_CONTROLLER_PORT  KRaft controller port of the single node   (default 9093)
#   KAFKA_CLUSTER_PORT     client port of cluster node 1              (default 9192; node N: +2(N-1))
#   KAFKA_XMS / KAFKA_XMX  JVM heap per node                          (default 256m / 256m)
#   KAFKA_START_TIMEOUT    seconds to wait for readiness              (default 90)
#   KAFKA_STATE_DIR        runtime state (config, data, log, pid); default .kafka/<port> in the
#                          repo (cluster: .kafka/cluster-<port>/node-N)
#   KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS  broker's group.min.session.timeout.ms (default 1000)
#
# Everything runtime lives under the gitignored .kafka/ (one directory per port, so a development
# broker, a test broker and a cluster can run side by side); jars under the gitignored
# deploy/local/kafka/.cache/libs.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
SINGLE_PORT="${KAFKA_PORT:-9092}"
SINGLE_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
CLUSTER_PORT="${KAFKA_CLUSTER_PORT:-9192}"
CLUSTER_NODES=3
XMS="${KAFKA_XMS:-256m}"
XMX="${KAFKA_XMX:-256m}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
GROUP_MIN_SESSION_TIMEOUT_MS="${KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS:-1000}"
CACHE="$HERE/.cache"
LIBS="$CACHE/libs"
HOST=127.0.0.1

# The node the functions below act on (set by use_single / use_cluster_node).
NODE_ID=1
PORT="$SINGLE_PORT"
CONTROLLER_PORT="$SINGLE_CONTROLLER_PORT"
STATE=""
VOTERS=""
REPLICATION=1
MIN_ISR=1
CLUSTER_DIR=""

say() { printf '[kafka.sh] %s\n' "$*"; }
die() {
  printf '[kafka.sh] ERROR: %s\n' "$*" >&2
  exit 1
}

use_single() {
  NODE_ID=1
  PORT="$SINGLE_PORT"
  CONTROLLER_PORT="$SINGLE_CONTROLLER_PORT"
  STATE="${KAFKA_STATE_DIR:-$ROOT/.kafka/$PORT}"
  VOTERS="1@$HOST:$CONTROLLER_PORT"
  REPLICATION=1
  MIN_ISR=1
}

cluster_client_port() { echo $((CLUSTER_PORT + 2 * ($1 - 1))); }

use_cluster_node() {
  local n="$1"
  [[ "$n" =~ ^[1-3]$ ]] || die "cluster node must be 1, 2 or 3 (got '$n')"
  CLUSTER_DIR="${KAFKA_STATE_DIR:-$ROOT/.kafka/cluster-$CLUSTER_PORT}"
  NODE_ID="$n"
  PORT="$(cluster_client_port "$n")"
  CONTROLLER_PORT=$((PORT + 1))
  STATE="$CLUSTER_DIR/node-$n"
  VOTERS=""
  local i
  for i in $(seq 1 "$CLUSTER_NODES"); do
    VOTERS="${VOTERS:+$VOTERS,}$i@$HOST:$(($(cluster_client_port "$i") + 1))"
  done
  REPLICATION=3
  MIN_ISR=2
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }
pid_file() { echo "$STATE/broker.pid"; }
log_file() { echo "$STATE/broker.log"; }

# The recorded pid, if that process is still our broker (guards against a recycled pid).
running_pid() {
  local file pid
  file="$(pid_file)"
  [[ -f "$file" ]] || return 1
  pid="$(cat "$file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $STATE/server.properties" || return 1
  echo "$pid"
}

resolve_jars() {
  [[ -f "$LIBS/.complete" ]] && return 0
  command -v mvn >/dev/null || die "mvn not found: Maven 3.8+ is needed to fetch the Kafka jars"
  mkdir -p "$CACHE"
  # One resolver at a time (several processes may start brokers on different ports at once).
  exec 9>"$CACHE/.lock"
  flock 9
  if [[ ! -f "$LIBS/.complete" ]]; then
    say "resolving Kafka jars from Maven Central into ${LIBS#"$ROOT"/} (first run only)..."
    rm -rf "$LIBS"
    mvn -B -q -Dstyle.color=never -f "$HERE/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$LIBS" >"$CACHE/mvn.log" 2>&1 || {
      cat "$CACHE/mvn.log" >&2
      die "Maven could not resolve the Kafka jars (is Maven Central reachable?)"
    }
    touch "$LIBS/.complete"
    say "resolved $(find "$LIBS" -name '*.jar' | wc -l) jars ($(du -sh "$LIBS" | cut -f1))"
  fi
  flock -u 9
}

write_server_properties() {
  cat >"$STATE/server.properties" <<PROPERTIES
# Generated by deploy/local/kafka/kafka.sh — KRaft node $NODE_ID (broker + controller), fast-test
# settings (reference/kafka-broker.md section 4). Do not edit; it is rewritten on every start.
process.roles=broker,controller
node.id=$NODE_ID
controller.quorum.voters=$VOTERS
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$STATE/data
num.partitions=1
auto.create.topics.enable=true
default.replication.factor=$REPLICATION
min.insync.replicas=$MIN_ISR
offsets.topic.replication.factor=$REPLICATION
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=$REPLICATION
transaction.state.log.min.isr=$MIN_ISR
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=$GROUP_MIN_SESSION_TIMEOUT_MS
# A crashed node is fenced (and dropped from every ISR, so acks=all writes go on with the other
# two) after 4 s without a heartbeat to the controller, instead of 9 s.
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=4000
replica.lag.time.max.ms=10000
log.cleaner.dedupe.buffer.size=2097152
num.network.threads=2
num.io.threads=2
background.threads=2
num.replica.fetchers=1
num.recovery.threads.per.data.dir=1
log.initial.task.delay.ms=100
log.delete.delay.ms=1000
PROPERTIES
}

new_cluster_id() {
  # Like kafka.tools.StorageTool random-uuid: 16 random bytes, URL-safe base64, no padding,
  # never starting with '-'.
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ "$id" != -* ]] && {
      echo "$id"
      return
    }
  done
}

# Bounded heap (without -Xmx the JVM would take 1/4 of RAM), serial GC and C1 only: faster
# start and a smaller footprint on 2-core machines; throughput is irrelevant for tests.
java_opts() {
  JAVA_OPTS=(-Xms"$XMS" -Xmx"$XMX" -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1
    -Djava.awt.headless=true -Dkafka.logs.dir="$STATE/logs")
}

# Formats the node's storage unless it already holds data (meta.properties), so a restart keeps
# every topic, offset and group. $1: the cluster id for a first format.
format_if_needed() {
  if [[ -f "$STATE/data/meta.properties" ]]; then
    say "node $NODE_ID: keeping the data in ${STATE#"$ROOT"/}/data"
    return 0
  fi
  say "node $NODE_ID: formatting fresh storage in ${STATE#"$ROOT"/}/data"
  java_opts
  java "${JAVA_OPTS[@]}" -Dlog4j.configuration="file:$HERE/tools-log4j.properties" -cp "$LIBS/*" \
    kafka.tools.StorageTool format -t "$1" -c "$STATE/server.properties" \
    >"$STATE/format.log" 2>&1 || {
    cat "$STATE/format.log" >&2
    die "formatting the storage failed"
  }
}

# Starts the current node's JVM detached (no waiting). $1: the cluster id for a first format.
spawn_node() {
  command -v java >/dev/null || die "java not found: a JDK/JRE 11+ (17 recommended) is needed"
  port_open "$PORT" && die "port $HOST:$PORT is already in use by another process (set the port)"
  port_open "$CONTROLLER_PORT" &&
    die "port $HOST:$CONTROLLER_PORT is already in use by another process (set the port)"
  mkdir -p "$STATE/logs"
  write_server_properties
  format_if_needed "$1"
  java_opts
  say "node $NODE_ID: starting on $HOST:$PORT (controller $CONTROLLER_PORT, heap $XMS..$XMX)"
  # setsid: the broker must not receive the Ctrl-C / SIGINT meant for the calling shell's job;
  # it is stopped explicitly by `stop`.
  setsid java "${JAVA_OPTS[@]}" -Dlog4j.configuration="file:$HERE/log4j.properties" -cp "$LIBS/*" \
    kafka.Kafka "$STATE/server.properties" >>"$(log_file)" 2>&1 </dev/null &
  echo "$!" >"$(pid_file)"
}

# Waits until the current node's port accepts connections and its group coordinator answers.
# $1: deadline (in $SECONDS), $2: start time for the messages.
wait_node_ready() {
  local deadline="$1" t0="$2" pid
  pid="$(cat "$(pid_file)")"
  until port_open "$PORT"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$(log_file)" >&2 || true
      die "node $NODE_ID exited during start-up (log above, full log: $(log_file))"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$(log_file)" >&2 || true
      stop_node TERM
      die "node $NODE_ID did not open $HOST:$PORT within ${START_TIMEOUT}s"
    fi
    sleep 0.2
  done
  say "node $NODE_ID: port $PORT open after $((SECONDS - t0))s; waiting for the group coordinator"
  local rc=0
  node "$HERE/wait-ready.js" "$HOST:$PORT" "$pid" "$((deadline - SECONDS))" || rc=$?
  if ((rc != 0)); then
    tail -n 40 "$(log_file)" >&2 || true
    stop_node TERM
    if ((rc == 2)); then die "node $NODE_ID exited during start-up (log above)"; fi
    die "node $NODE_ID did not become ready within ${START_TIMEOUT}s (log above)"
  fi
}

rss_of() { ps -o rss= -p "$1" 2>/dev/null | awk '{ printf "%d MiB", $1 / 1024 }'; }

# Stops the current node, keeping its data: $1 = TERM (clean shutdown, up to 15 s, then KILL) or
# KILL (a crash, for tests).
stop_node() {
  local signal="${1:-TERM}" pid
  if ! pid="$(running_pid)"; then
    say "node $NODE_ID: not running (${STATE#"$ROOT"/})"
    return 0
  fi
  say "node $NODE_ID: stopping pid $pid (SIG$signal)"
  kill "-$signal" "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null && ((waited < 75)); do
    sleep 0.2
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "node $NODE_ID: still running after 15s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$(pid_file)"
}

# True when $1 is the option $2, false when $1 is empty; anything else is an error.
option() {
  case "${1:-}" in
    "") return 1 ;;
    "$2") return 0 ;;
    *) die "unknown option '$1' (expected $2)" ;;
  esac
}

# --- single node -------------------------------------------------------------------------------

start() {
  if [[ -n "${KAFKA_BROKERS:-}" ]]; then
    say "KAFKA_BROKERS is set: using the broker(s) at $KAFKA_BROKERS, not starting one"
    return 0
  fi
  use_single
  local pid
  if pid="$(running_pid)"; then
    say "already running on $HOST:$PORT (pid $pid)"
    return 0
  fi
  command -v node >/dev/null || die "node not found"
  if option "${1:-}" --fresh; then rm -rf "$STATE"; fi
  local t0=$SECONDS
  resolve_jars
  spawn_node "$(new_cluster_id)"
  wait_node_ready $((SECONDS + START_TIMEOUT)) "$t0"
  pid="$(cat "$(pid_file)")"
  say "ready: KAFKA_BROKERS=$HOST:$PORT (pid $pid, $((SECONDS - t0))s, rss $(rss_of "$pid"))"
}

stop() {
  use_single
  if option "${1:-}" --wipe; then
    stop_node KILL # the data is thrown away: no clean shutdown needed
    rm -rf "$STATE"
    say "stopped, data removed"
  else
    stop_node TERM
    say "stopped, data kept in ${STATE#"$ROOT"/} (remove it: kafka.sh wipe)"
  fi
}

wipe() {
  use_single
  if running_pid >/dev/null; then die "the broker on $PORT is running: stop it first"; fi
  rm -rf "$STATE"
  say "data removed (${STATE#"$ROOT"/})"
}

status() {
  use_single
  local pid
  if pid="$(running_pid)"; then
    say "running on $HOST:$PORT (pid $pid, rss $(rss_of "$pid")), state in ${STATE#"$ROOT"/}"
  else
    say "not running (port $PORT)"
    return 3
  fi
}

# --- three-node cluster ------------------------------------------------------------------------

cluster_brokers() {
  local list="" n
  for n in $(seq 1 "$CLUSTER_NODES"); do list="${list:+$list,}$HOST:$(cluster_client_port "$n")"; done
  echo "$list"
}

# Starts the given nodes (at first all three at once: the quorum needs a majority to elect a
# controller before any node can finish starting) and waits until each one serves.
cluster_spawn_and_wait() {
  local t0=$SECONDS n id
  resolve_jars
  use_cluster_node 1
  mkdir -p "$CLUSTER_DIR"
  [[ -f "$CLUSTER_DIR/cluster.id" ]] || new_cluster_id >"$CLUSTER_DIR/cluster.id"
  id="$(cat "$CLUSTER_DIR/cluster.id")"
  for n in "$@"; do
    use_cluster_node "$n"
    if running_pid >/dev/null; then
      say "node $n: already running"
      continue
    fi
    spawn_node "$id"
  done
  local deadline=$((SECONDS + START_TIMEOUT))
  for n in "$@"; do
    use_cluster_node "$n"
    wait_node_ready "$deadline" "$t0"
  done
  say "ready after $((SECONDS - t0))s: KAFKA_BROKERS=$(cluster_brokers)"
}

cluster_start() {
  command -v node >/dev/null || die "node not found"
  use_cluster_node 1
  if option "${1:-}" --fresh; then rm -rf "$CLUSTER_DIR"; fi
  # shellcheck disable=SC2046 # word splitting of the node list is intended
  cluster_spawn_and_wait $(seq 1 "$CLUSTER_NODES")
}

cluster_stop() {
  local n signal=TERM wipe=false
  # With --wipe the data is thrown away: no clean shutdown needed (a clean one of the last nodes
  # waits for a quorum that is already gone).
  if option "${1:-}" --wipe; then
    signal=KILL
    wipe=true
  fi
  for n in $(seq "$CLUSTER_NODES" -1 1); do
    use_cluster_node "$n"
    stop_node "$signal"
  done
  if $wipe; then
    rm -rf "$CLUSTER_DIR"
    say "cluster stopped, data removed"
  else
    say "cluster stopped, data kept in ${CLUSTER_DIR#"$ROOT"/}"
  fi
}

cluster_status() {
  local n pid rc=0
  for n in $(seq 1 "$CLUSTER_NODES"); do
    use_cluster_node "$n"
    if pid="$(running_pid)"; then
      say "node $n: running on $HOST:$PORT (pid $pid, rss $(rss_of "$pid"))"
    else
      say "node $n: not running (port $PORT)"
      rc=3
    fi
  done
  return "$rc"
}

usage() {
  echo "usage: $0 start [--fresh] | stop [--wipe] | kill | wipe | status" >&2
  echo "       $0 cluster-start [--fresh] | cluster-stop [--wipe] | cluster-status" >&2
  echo "       $0 cluster-node-start N | cluster-node-stop N | cluster-node-kill N" >&2
  exit 64
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  kill)
    use_single
    stop_node KILL
    ;;
  wipe) wipe ;;
  status) status ;;
  cluster-start) cluster_start "${2:-}" ;;
  cluster-stop) cluster_stop "${2:-}" ;;
  cluster-status) cluster_status ;;
  cluster-node-start) cluster_spawn_and_wait "${2:?node number}" ;;
  cluster-node-stop)
    use_cluster_node "${2:?node number}"
    stop_node TERM
    ;;
  cluster-node-kill)
    use_cluster_node "${2:?node number}"
    stop_node KILL
    ;;
  *) usage ;;
esac
