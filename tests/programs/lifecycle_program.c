/* A communicator's lifecycle through the C API, for the integration tests (under collrun):
 *   lifecycle_program recreate       create, all-reduce, destroy, and again, in one process
 *   lifecycle_program destroy-failed  an all-reduce fails with messages in flight (rank 1 passes
 *                                     more elements; run with COLL_CHECK_ARGS=0), then destroy
 *   lifecycle_program abort-thread   rank 0 blocks in an all-reduce rank 1 never calls; another
 *                                     thread calls collCommAbort, which must end it promptly
 *   lifecycle_program abort-recreate an all-reduce fails (rank 0 passes another count), every
 *                                     rank aborts its communicator and makes a new one that
 *                                     all-reduces exactly
 *   lifecycle_program late-rejoin    (under mpirun) every rank makes and destroys a communicator;
 *                                     then the last rank sleeps while the others make a second
 *                                     one, which must fail, not wait for it forever
 * Each prints "rank R: <mode> ok ..." when the library behaved, and exits non-zero otherwise. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll.h"
#include "mismatched_allreduce.h"

static int init(collComm_t* comm, int* rank) {
  collResult_t result = collCommInitFromEnv(comm);
  if (result == collSuccess) result = collCommUserRank(*comm, rank);
  if (result != collSuccess) fprintf(stderr, "init failed: %s\n", collGetLastError(NULL));
  return result == collSuccess;
}

static int recreate(void) {
  for (int round = 0; round < 3; ++round) {
    collComm_t comm;
    int rank, size;
    if (!init(&comm, &rank) || collCommCount(comm, &size) != collSuccess) return 1;
    float value = (float)(rank + 1);
    if (collAllReduce(&value, &value, 1, collFloat32, collSum, comm, NULL) != collSuccess) {
      fprintf(stderr, "round %d: %s\n", round, collGetLastError(comm));
      return 1;
    }
    if (value != (float)(size * (size + 1) / 2)) {
      fprintf(stderr, "round %d: sum %g\n", round, value);
      return 1;
    }
    if (collCommDestroy(comm) != collSuccess) return 1;
    if (round == 2) printf("rank %d: recreate ok\n", rank);
  }
  return 0;
}

static int destroy_failed(void) {
  collComm_t comm;
  int rank;
  if (!init(&comm, &rank)) return 1;
  const size_t count = (size_t)1 << 20;
  float* data = calloc(count + 4096, sizeof(float));
  const collResult_t result =
      collAllReduce(data, data, rank == 1 ? count + 4096 : count, collFloat32, collSum, comm, NULL);
  if (result == collSuccess) {
    fprintf(stderr, "rank %d: the mismatched all-reduce succeeded\n", rank);
    return 1;
  }
  const double start = now_seconds();
  const collResult_t destroyed = collCommDestroy(comm);
  printf("rank %d: destroy-failed ok: destroy returned %d in %.2f s\n", rank, (int)destroyed,
         now_seconds() - start);
  free(data);
  return destroyed == collSuccess ? 0 : 1;
}

struct AbortLater {
  collComm_t comm;
  double at;
  collResult_t result;
};

static void* abort_later(void* arg) {
  struct AbortLater* abort = arg;
  usleep(500 * 1000);
  abort->at = now_seconds();
  abort->result = collCommAbort(abort->comm);
  return NULL;
}

/* Where rank 0 says its abort has ended the all-reduce: the ranks are children of one
 * launcher. */
static void abort_done_path(char* path, size_t size) {
  snprintf(path, size, "/tmp/lifecycle_abort_done_%d", (int)getppid());
}

static int abort_thread(void) {
  collComm_t comm;
  int rank;
  if (!init(&comm, &rank)) return 1;
  char done[64];
  abort_done_path(done, sizeof done);
  if (rank != 0) {
    /* Never calls the all-reduce, and stays (leaving the job without a failure) until rank 0's
     * call has returned, however slow this machine is. */
    for (int waited_ms = 0; access(done, F_OK) != 0; waited_ms += 10) {
      if (waited_ms > 60000) return 1;
      usleep(10 * 1000);
    }
    unlink(done);
    return collCommAbort(comm) == collSuccess ? 0 : 1;
  }
  struct AbortLater abort = {comm, 0, collSuccess};
  pthread_t thread;
  pthread_create(&thread, NULL, abort_later, &abort);
  float value = 1;
  const collResult_t result = collAllReduce(&value, &value, 1, collFloat32, collSum, comm, NULL);
  const double returned = now_seconds();
  const char* error = result == collSuccess ? "" : collGetLastError(NULL);
  pthread_join(thread, NULL);
  fclose(fopen(done, "w"));
  printf("rank 0: all-reduce returned %d (%s) %.3f s after collCommAbort\n", (int)result, error,
         returned - abort.at);
  if (result == collSuccess || strstr(error, "aborted") == NULL || abort.result != collSuccess) {
    return 1;
  }
  printf("rank 0: abort-thread ok\n");
  return 0;
}

static int abort_recreate(void) {
  collComm_t comm;
  int rank, size;
  if (!init(&comm, &rank) || collCommCount(comm, &size) != collSuccess) return 1;
  if (!mismatched_allreduce_fails(comm, rank, NULL)) return 1;
  if (collCommAbort(comm) != collSuccess) return 1;
  if (!init(&comm, &rank)) return 1;
  float value = (float)(rank + 1);
  if (collAllReduce(&value, &value, 1, collFloat32, collSum, comm, NULL) != collSuccess) {
    fprintf(stderr, "rank %d: after re-creating: %s\n", rank, collGetLastError(comm));
    return 1;
  }
  if (value != (float)(size * (size + 1) / 2)) {
    fprintf(stderr, "rank %d: after re-creating: sum %g\n", rank, value);
    return 1;
  }
  if (collCommDestroy(comm) != collSuccess) return 1;
  printf("rank %d: abort-recreate ok\n", rank);
  return 0;
}

static int late_rejoin(void) {
  collComm_t comm;
  int rank, size;
  if (!init(&comm, &rank) || collCommCount(comm, &size) != collSuccess) return 1;
  if (collCommDestroy(comm) != collSuccess) return 1;
  if (rank == size - 1) {
    sleep(60); /* the launcher ends this rank once the others have failed */
    return 1;
  }
  const double start = now_seconds();
  if (collCommInitFromEnv(&comm) == collSuccess) {
    fprintf(stderr, "rank %d: a communicator was made without rank %d\n", rank, size - 1);
    return 1;
  }
  printf("rank %d: late-rejoin ok, failed after %.1f s: %s\n", rank, now_seconds() - start,
         collGetLastError(NULL));
  return 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "recreate") == 0) return recreate();
  if (strcmp(mode, "destroy-failed") == 0) return destroy_failed();
  if (strcmp(mode, "abort-thread") == 0) return abort_thread();
  if (strcmp(mode, "abort-recreate") == 0) return abort_recreate();
  if (strcmp(mode, "late-rejoin") == 0) return late_rejoin();
  fprintf(stderr, "lifecycle_program: unknown mode '%s'\n", mode);
  return 2;
}
