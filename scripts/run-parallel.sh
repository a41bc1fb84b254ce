#!/usr/bin/env bash
# Runs the npm scripts named as arguments at the same time, each one's output kept apart and
# printed whole when it ends (in the order given), and fails if any of them failed. For the
# CPU-bound checks of `npm test` (lint, typecheck, the build) on a machine with cores to spare
# for each: together they take about as long as the longest of them.
#
#   bash scripts/run-parallel.sh lint typecheck build
set -uo pipefail

(($# > 0)) || {
  echo "usage: $0 SCRIPT [SCRIPT...]" >&2
  exit 2
}
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
pids=()
for i in $(seq 1 $#); do
  name="${!i}"
  (
    start=$SECONDS
    npm run --silent "$name" >"$dir/$i.log" 2>&1
    rc=$?
    echo "$rc $((SECONDS - start))" >"$dir/$i.rc"
    exit "$rc"
  ) &
  pids+=($!)
done
# A signal stops every script still running.
trap 'kill "${pids[@]}" 2>/dev/null; exit 130' INT TERM
failed=()
for i in $(seq 1 $#); do
  name="${!i}"
  wait "${pids[$((i - 1))]}"
  read -r rc seconds <"$dir/$i.rc" || rc=1
  cat "$dir/$i.log"
  printf '[run-parallel] %s: exit %s after %ss\n' "$name" "$rc" "${seconds:-?}"
  ((rc == 0)) || failed+=("$name")
done
((${#failed[@]} == 0)) || {
  printf '[run-parallel] failed: %s\n' "${failed[*]}" >&2
  exit 1
}
