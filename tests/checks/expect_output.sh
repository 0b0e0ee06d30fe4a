#!/usr/bin/env bash
# Runs a command and judges it by its exit status and its output together. ctest's
# PASS_REGULAR_EXPRESSION judges the output alone: a script that prints its table and then exits
# 1 would pass. The output passes through as it comes (ctest shows it), stderr merged.
# Usage: expect_output.sh [--status N] PATTERN... -- COMMAND [ARG...]
#   --status N  the exit status the command must end with (default 0)
#   PATTERN     an extended regular expression (grep -E) some line of the output must match
set -euo pipefail

usage="usage: expect_output.sh [--status N] PATTERN... -- COMMAND [ARG...]"
want_status=0
patterns=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  if [ "$1" = --status ]; then
    [[ ${2-} =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
    want_status=$2
    shift 2
  else
    patterns+=("$1")
    shift
  fi
done
# Without a pattern or a command there would be nothing to judge: refuse rather than pass.
if [ $# -lt 2 ] || [ ${#patterns[@]} -eq 0 ]; then
  echo "$usage" >&2
  exit 2
fi
shift

output=$(mktemp)
trap 'rm -f "$output"' EXIT
status=0
"$@" 2>&1 | tee "$output" || status=${PIPESTATUS[0]}

failed=0
if [ "$status" -ne "$want_status" ]; then
  echo "expect_output: exit status $status, expected $want_status: $*" >&2
  failed=1
fi
for pattern in "${patterns[@]}"; do
  if ! grep -Eq -e "$pattern" "$output"; then
    echo "expect_output: no line of the output matches: $pattern" >&2
    failed=1
  fi
done
exit "$failed"
