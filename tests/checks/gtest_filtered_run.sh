#!/usr/bin/env bash
# Runs a googletest binary on a filter and fails unless the run passes, every pattern of the
# filter selects a test and at least MIN_PASSED tests passed: a suite renamed (or skipped
# wholesale) would otherwise leave a filtered run that tests nothing, and passes.
# Usage: gtest_filtered_run.sh MIN_PASSED FILTER BINARY [ARG...]
#   FILTER  positive patterns joined by ':' (no '-' exclusions)
set -euo pipefail
min_passed=$1 filter=$2
shift 2

IFS=: read -ra patterns <<<"$filter"
for pattern in "${patterns[@]}"; do
  # Captured before grep: grep -q closing the pipe early would fail the listing (pipefail).
  listed=$("$@" --gtest_list_tests --gtest_filter="$pattern")
  if ! grep -q '^  ' <<<"$listed"; then  # tests are indented under their suite
    echo "gtest_filtered_run: no test matches '$pattern'" >&2
    exit 1
  fi
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$@" --gtest_filter="$filter" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || exit "$status"
# gtest's summary line: "[  PASSED  ] 39 tests." ("1 test." for one).
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\.$/\1/p' "$log" | tail -n 1)
if [ "${passed:-0}" -lt "$min_passed" ]; then
  echo "gtest_filtered_run: ${passed:-0} tests passed, at least $min_passed expected" >&2
  exit 1
fi
