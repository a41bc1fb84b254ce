#!/usr/bin/env bash
# The integration and e2e tiers in two passes, inside scripts/with-infra.sh (which starts one
# broker per worker):
#   1. every suite except the ALONE ones, on TEST_WORKERS jest workers (default 3), longest first;
#   2. the ALONE suites one after another (--runInBand, on the first broker): the broker-restart
#      test and the chaos run judge recovery and liveness within bounded waits, and failed when
#      two other stacks starved them of CPU on 2 cores.
# Extra arguments go to both jest runs. Both passes run even if the first fails; the exit code
# is the first failure's.
set -uo pipefail
workers="${TEST_WORKERS:-3}"
alone=(libs/kafka/test/broker-restart.int-spec.ts test/e2e/chaos.e2e-spec.ts)
ignore=()
for path in "${alone[@]}"; do ignore+=(--testPathIgnorePatterns "$path"); done

rc=0
echo "[test-integration] pass 1: every suite but ${alone[*]} on $workers workers"
npx jest --selectProjects integration e2e --maxWorkers="$workers" \
  --testPathIgnorePatterns /node_modules/ /dist/ "${ignore[@]}" "$@" || rc=$?
echo "[test-integration] pass 2: ${alone[*]}, one at a time"
npx jest --selectProjects integration e2e --runInBand "$@" -- "${alone[@]}" || ((rc != 0)) || rc=$?
exit "$rc"
