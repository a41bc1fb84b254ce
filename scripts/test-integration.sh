#!/usr/bin/env bash
# The integration and e2e tiers, inside scripts/with-infra.sh (which starts one broker per worker):
# every suite on TEST_WORKERS jest workers (default 4), longest first (jest.sequencer.cjs), so the
# chaos run starts at once and its waits (kills, restarts, quiet periods: little CPU) overlap the
# CPU-bound suites instead of following them.
# TEST_ALONE="<path> ..." moves suites out into a second pass, one at a time (--runInBand, on the
# first broker), for a machine too slow for their bounded waits beside other stacks.
# Extra arguments go to both jest runs. Both passes run even if the first fails; the exit code
# is the first failure's.
set -uo pipefail
workers="${TEST_WORKERS:-4}"
read -r -a alone <<<"${TEST_ALONE:-}"
ignore=()
for path in "${alone[@]}"; do ignore+=(--testPathIgnorePatterns "$path"); done

rc=0
echo "[test-integration] every suite${alone[*]:+ but ${alone[*]}} on $workers workers"
npx jest --selectProjects integration e2e --maxWorkers="$workers" \
  --testPathIgnorePatterns /node_modules/ /dist/ "${ignore[@]}" "$@" || rc=$?
if ((${#alone[@]} > 0)); then
  echo "[test-integration] alone: ${alone[*]}, one at a time"
  npx jest --selectProjects integration e2e --runInBand "$@" -- "${alone[@]}" || ((rc != 0)) || rc=$?
fi
exit "$rc"
