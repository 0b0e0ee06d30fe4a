#!/usr/bin/env bash
# Builds libcoll and the sanitizer test subset (tests/sanitizer/CMakeLists.txt) in a tree of its
# own with a sanitizer, then runs the subset; ctest's Sanitizers.* call it, so the README's test
# command covers the sanitizers. A rerun rebuilds incrementally (and through ccache if present).
# The run fails where a pattern of the filter selects no test or fewer than MIN_PASSED pass.
# Usage: run_sanitized.sh SOURCE_DIR TREE address|thread GTEST_FILTER MIN_PASSED
set -euo pipefail
source_dir=$1 tree=$2 sanitizer=$3 filter=$4 min_passed=$5

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -g1: reports with file and line, at little compile time.
mkdir -p "$tree"
cmake -S "$source_dir" -B "$tree" -G Ninja -DCOLL_SANITIZE="$sanitizer" -DCMAKE_CXX_FLAGS=-g1 \
  "${launcher[@]}" >"$tree/configure.log" 2>&1 || { cat "$tree/configure.log"; exit 1; }
cmake --build "$tree" --target coll_sanitizer_tests

if [ "$sanitizer" = thread ]; then
  # UCX patches madvise and mmap in every loaded object (its memory hooks, installed when libucs
  # loads, before main); glibc calls madvise as a thread exits, after TSan has dropped the
  # thread's state, and UCX's hook then takes a lock TSan intercepts: a crash. Only the
  # environment of the process, at start, turns the hooks off.
  export UCX_MEM_MMAP_HOOK_MODE=none
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
else
  export LSAN_OPTIONS="suppressions=$source_dir/tests/sanitizer/lsan.supp:fast_unwind_on_malloc=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
fi
exec "$source_dir/tests/checks/gtest_filtered_run.sh" "$min_passed" "$filter" \
  "$tree/tests/sanitizer/coll_sanitizer_tests"
