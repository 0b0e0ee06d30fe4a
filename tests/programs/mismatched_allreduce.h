/* What lifecycle_program.c and uniqueid_program.c share. A header, not a .c file: tests/
 * CMakeLists.txt makes each .c and .cc file of tests/programs/ an executable. */
#ifndef COLL_TESTS_PROGRAMS_MISMATCHED_ALLREDUCE_H
#define COLL_TESTS_PROGRAMS_MISMATCHED_ALLREDUCE_H

#include <stdio.h>
#include <time.h>

#include "coll/coll.h"

static inline double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* An all-reduce the ranks call with different counts (rank 0 two elements, the others one), which
 * must fail on every rank. When it fails: prints "rank R: failed S s after the call: ERROR",
 * sets *failed_at (unless NULL) to now_seconds() when the call returned, and returns 1; when it
 * succeeds, says so on stderr and returns 0. */
static inline int mismatched_allreduce_fails(collComm_t comm, int rank, double* failed_at) {
  float values[2] = {1, 1};
  const double start = now_seconds();
  if (collAllReduce(values, values, rank == 0 ? 2 : 1, collFloat32, collSum, comm, NULL) ==
      collSuccess) {
    fprintf(stderr, "rank %d: a mismatched all-reduce succeeded\n", rank);
    return 0;
  }
  const double failed = now_seconds();
  if (failed_at != NULL) *failed_at = failed;
  printf("rank %d: failed %.3f s after the call: %s\n", rank, failed - start,
         collGetLastError(comm));
  return 1;
}

#endif /* COLL_TESTS_PROGRAMS_MISMATCHED_ALLREDUCE_H */
