#!/usr/bin/env bash
# The integration and e2e tiers, inside scripts/with-infra.sh (which starts one broker per worker):
# every suite on TEST_WORKERS jest workers (default 4), longest first (jest.sequencer.cjs), so the
# chaos run starts at once and its waits (kills, restarts, quiet periods: little CPU) overlap the
# CPU-bound suites instead of following them.
# Beside them, the failover suite (test/failover, `npm run test:failover`): a replicated
# PostgreSQL (scripts/with-pg-ha.sh, pg_auto_failover) whose primary it kills while a stack runs.
# It is mostly waiting (the cluster's start, the monitor's failure detection, the promotion), so
# it runs at the same time, on a broker of its own: the last of KAFKA_WORKER_BROKERS when
# with-infra started one more than TEST_WORKERS (`npm run test:integration:built` does), and on
# pg-ha ports of its own (PG_HA_PORT, default 25531, or the next free triple: never the
# integration tier's 5432 or 19092+, nor the chaos run's pg-ha from 25431). Its output is kept
# apart and printed whole when it ends. TEST_FAILOVER=after runs it after the integration tier
# instead (a machine too slow for both at once); TEST_FAILOVER=no leaves it out, and is the
# default when arguments are given (`npm run test:integration:built -- <path>`: one suite's run).
# TEST_ALONE="<path> ..." moves suites out into a second pass, one at a time (--runInBand, on the
# first broker), for a machine too slow for their bounded waits beside other stacks.
# Extra arguments go to both jest runs of the integration tier. Every part runs even if another
# fails; the exit code is the first failure's.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
workers="${TEST_WORKERS:-4}"
failover="${TEST_FAILOVER:-$( (($# == 0)) && echo beside || echo no)}"
[[ "$failover" =~ ^(beside|after|no)$ ]] || {
  echo "[test-integration] TEST_FAILOVER must be beside, after or no, not '$failover'" >&2
  exit 2
}
read -r -a alone <<<"${TEST_ALONE:-}"
ignore=()
for path in "${alone[@]}"; do ignore+=(--testPathIgnorePatterns "$path"); done

# The brokers: the first $workers for the integration tier, one more (if started) for failover.
read -r -a brokers <<<"${KAFKA_WORKER_BROKERS:-${KAFKA_BROKERS:-}}"
failover_broker="${KAFKA_BROKERS:-}"
if ((${#brokers[@]} > workers)); then
  failover_broker="${brokers[$workers]}"
  KAFKA_WORKER_BROKERS="${brokers[*]:0:$workers}"
  export KAFKA_WORKER_BROKERS
elif [[ "$failover" == beside ]]; then
  echo "[test-integration] no broker to spare for the failover suite (KAFKA_BROKER_COUNT=$((workers + 1))): it runs after the integration tier"
  failover=after
fi

failover_pid=""
failover_log="$(mktemp)"
failover_time="$(mktemp)"
# The failover suite in the background: with-pg-ha.sh starts the cluster, runs jest, and always
# stops and wipes the cluster (also when this script is interrupted: the subshell passes TERM on
# to the suite's process group). Its own duration is written to $failover_time when it ends.
start_failover() {
  (
    started=$SECONDS
    # A process group of its own (setsid): on TERM the whole group is signalled — with-pg-ha.sh,
    # which then stops the cluster, jest, and the apps its stack spec started (they outlive a
    # jest that is killed) — and once with-pg-ha.sh is done, whatever is left of the group (an
    # app jest was still starting) is killed.
    KAFKA_BROKERS="$failover_broker" KAFKA_WORKER_BROKERS="" PG_HA_PORT="${PG_HA_PORT:-25531}" \
      setsid bash "$ROOT/scripts/with-pg-ha.sh" npx jest --selectProjects failover --runInBand &
    child=$!
    trap 'kill -TERM -- "-$child" 2>/dev/null; wait "$child"; kill -KILL -- "-$child" 2>/dev/null; exit 143' TERM
    rc=0
    wait "$child" || rc=$?
    echo "$((SECONDS - started))" >"$failover_time"
    exit "$rc"
  ) >"$failover_log" 2>&1 &
  failover_pid=$!
  echo "[test-integration] the failover suite ${1:-beside it} (broker $failover_broker; its output when it ends)"
}
finish_failover() {
  local rc=0 waited_from=$SECONDS
  wait "$failover_pid" || rc=$?
  # The wall time the failover suite added to the stage (beside: only what it ran past the tier).
  echo "[test-integration] waited $((SECONDS - waited_from))s for the failover suite after the integration tier"
  failover_pid=""
  echo "[test-integration] the failover suite's output:"
  cat "$failover_log"
  echo "[test-integration] the failover suite: exit $rc, its run took $(cat "$failover_time" 2>/dev/null || echo '?')s"
  return "$rc"
}
cleanup() {
  [[ -z "$failover_pid" ]] || {
    kill -TERM "$failover_pid" 2>/dev/null
    wait "$failover_pid" 2>/dev/null
    echo "[test-integration] the failover suite, stopped: its output so far:"
    cat "$failover_log"
  }
  rm -f "$failover_log" "$failover_time"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rc=0
[[ "$failover" != beside ]] || start_failover
tier_started=$SECONDS
echo "[test-integration] every suite${alone[*]:+ but ${alone[*]}} on $workers workers"
# "$@" first: after --testPathIgnorePatterns (an array option) a path would be taken as one more
# pattern to ignore, and every suite but it would run.
npx jest "$@" --selectProjects integration e2e --maxWorkers="$workers" \
  --testPathIgnorePatterns /node_modules/ /dist/ "${ignore[@]}" || rc=$?
if ((${#alone[@]} > 0)); then
  echo "[test-integration] alone: ${alone[*]}, one at a time"
  npx jest --selectProjects integration e2e --runInBand "$@" -- "${alone[@]}" || ((rc != 0)) || rc=$?
fi
echo "[test-integration] the integration tier took $((SECONDS - tier_started))s"
[[ "$failover" != after ]] || start_failover after it
if [[ -n "$failover_pid" ]]; then finish_failover || ((rc != 0)) || rc=$?; fi
exit "$rc"
