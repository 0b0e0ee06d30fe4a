/* Uses libcoll only through its C API, the way a program written against NCCL would.
 *   c_api_example env         every rank inits from the environment contract (collrun)
 *   c_api_example id N        rank 0 makes a unique id, starts ranks 1..N-1 with it
 *   c_api_example rank R N ID (started by the above) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll/coll.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    collResult_t result_ = (call);                                               \
    if (result_ != collSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, collGetErrorString(result_), \
              collGetLastError(NULL));                                           \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

static int exercise(collComm_t comm) {
  int rank = -1, size = 0;
  CHECK(collCommUserRank(comm, &rank));
  CHECK(collCommCount(comm, &size));
  enum { kCount = 1000 };
  static float send[kCount], recv[kCount];
  for (int i = 0; i < kCount; ++i) send[i] = (float)(rank + i % 3);
  CHECK(collAllReduce(send, recv, kCount, collFloat32, collSum, comm, NULL));
  CHECK(collAllReduce(send, send, kCount, collFloat, collSum, comm, NULL)); /* in place */
  for (int i = 0; i < kCount; ++i) {
    const float expected = (float)(size * (size - 1) / 2 + size * (i % 3));
    if (recv[i] != expected || send[i] != expected) {
      fprintf(stderr, "rank %d: element %d is %g/%g, expected %g\n", rank, i, recv[i], send[i],
              expected);
      return 1;
    }
  }
  /* Non-blocking: queue, "compute", test, wait. */
  static float async_buffer[kCount];
  for (int i = 0; i < kCount; ++i) async_buffer[i] = (float)(rank + i % 3);
  collRequest_t request = NULL;
  CHECK(collAllReduceAsync(async_buffer, async_buffer, kCount, collFloat32, collSum, 7, comm,
                           &request));
  int done = 0;
  CHECK(collTest(request, &done));
  CHECK(collWait(request));
  for (int i = 0; i < kCount; ++i) {
    if (async_buffer[i] != recv[i]) {
      fprintf(stderr, "rank %d: async element %d is %g, expected %g\n", rank, i, async_buffer[i],
              recv[i]);
      return 1;
    }
  }
  /* Bad arguments are refused with a status and a message, not a crash. */
  if (collAllReduce(send, recv, kCount, (collDataType_t)42, collSum, comm, NULL) !=
          collInvalidArgument ||
      strstr(collGetLastError(comm), "datatype") == NULL) {
    fprintf(stderr, "an invalid datatype was not reported\n");
    return 1;
  }
  if (collAllReduce(NULL, recv, kCount, collFloat, collSum, comm, NULL) != collInvalidArgument) {
    fprintf(stderr, "a null buffer was not reported\n");
    return 1;
  }
  /* Buffers the ranks of a node map into each other (large enough for peer_read). */
  enum { kSharedCount = 1 << 20 };
  float* shared = NULL;
  CHECK(collMemAlloc((void**)&shared, kSharedCount * sizeof(float)));
  for (int i = 0; i < kSharedCount; ++i) shared[i] = (float)(rank + i % 3);
  CHECK(collAllReduce(shared, shared, kSharedCount, collFloat32, collSum, comm, NULL));
  for (int i = 0; i < kSharedCount; ++i) {
    if (shared[i] != recv[i % 3]) {
      fprintf(stderr, "rank %d: shared element %d is %g, expected %g\n", rank, i, shared[i],
              recv[i % 3]);
      return 1;
    }
  }
  CHECK(collMemFree(shared));
  if (collMemAlloc(NULL, 8) != collInvalidArgument || collMemFree(send) != collInvalidArgument) {
    fprintf(stderr, "a bad collMemAlloc or collMemFree was not reported\n");
    return 1;
  }
  printf("rank %d of %d: c api ok\n", rank, size);
  return 0;
}

/* The collectives a training framework's backend needs, and split, through the C API. */
static int exercise_backend_collectives(collComm_t comm) {
  int rank = -1, size = 0, version = 0;
  CHECK(collCommUserRank(comm, &rank));
  CHECK(collCommCount(comm, &size));
  CHECK(collGetVersion(&version));
  if (version != COLL_VERSION_CODE ||
      COLL_VERSION_CODE != COLL_VERSION(COLL_MAJOR, COLL_MINOR, COLL_PATCH)) {
    fprintf(stderr, "collGetVersion gave %d, the header says %d\n", version, COLL_VERSION_CODE);
    return 1;
  }
  enum { kCount = 300, kMaxRanks = 16 };
  static int data[kCount * kMaxRanks], out[kCount * kMaxRanks];
  if (size > kMaxRanks) return 1;
  for (int i = 0; i < kCount; ++i) data[i] = rank == size - 1 ? i : -1;
  CHECK(collBroadcast(data, data, kCount, collInt32, size - 1, comm, NULL));
  for (int i = 0; i < kCount * size; ++i) data[i] = rank * 1000 + i % kCount;
  CHECK(collReduce(data, out, kCount, collInt32, collMax, 0, comm, NULL));
  CHECK(collAllGather(data + rank * kCount, data, kCount, collInt32, comm, NULL)); /* in place */
  CHECK(collReduceScatter(data, out + kCount, kCount, collInt32, collSum, comm, NULL));
  for (int i = 0; i < kCount; ++i) {
    const int gathered_ok = data[kCount * (size - 1) + i] == (size - 1) * 1000 + i;
    const int reduced_ok = rank != 0 || out[i] == (size - 1) * 1000 + i;
    /* Block `rank` of the gathered data, summed over ranks: every rank holds the same. */
    const int scattered_ok = out[kCount + i] == size * (rank * 1000 + i);
    if (!gathered_ok || !reduced_ok || !scattered_ok) {
      fprintf(stderr, "rank %d: element %d wrong (gather %d reduce %d reduce-scatter %d)\n", rank,
              i, gathered_ok, reduced_ok, scattered_ok);
      return 1;
    }
  }
  collComm_t half = NULL;
  CHECK(collCommSplit(comm, rank % 2, rank, &half));
  int half_size = 0, one = 1;
  CHECK(collCommCount(half, &half_size));
  CHECK(collAllReduce(&one, &one, 1, collInt32, collSum, half, NULL));
  CHECK(collCommDestroy(half));
  if (one != half_size || half_size != (size + 1 - rank % 2) / 2) {
    fprintf(stderr, "rank %d: split communicator of %d counted %d\n", rank, half_size, one);
    return 1;
  }
  if (collBroadcast(data, data, kCount, collInt32, size, comm, NULL) != collInvalidArgument) {
    fprintf(stderr, "an invalid root was not reported\n");
    return 1;
  }
  printf("rank %d of %d: backend collectives ok\n", rank, size);
  return 0;
}

int main(int argc, char** argv) {
  collComm_t comm = NULL;
  if (argc >= 2 && strcmp(argv[1], "env") == 0) {
    CHECK(collCommInitFromEnv(&comm));
  } else if (argc >= 3 && strcmp(argv[1], "id") == 0) {
    const int size = atoi(argv[2]);
    collUniqueId id;
    CHECK(collGetUniqueId(&id));
    for (int r = 1; r < size; ++r) {
      if (fork() == 0) {
        char rank_text[16], size_text[16];
        snprintf(rank_text, sizeof rank_text, "%d", r);
        snprintf(size_text, sizeof size_text, "%d", size);
        execl(argv[0], argv[0], "rank", rank_text, size_text, id.internal, (char*)NULL);
        _exit(127);
      }
    }
    CHECK(collCommInitRank(&comm, size, id, 0));
  } else if (argc >= 5 && strcmp(argv[1], "rank") == 0) {
    collUniqueId id;
    memset(&id, 0, sizeof id);
    strncpy(id.internal, argv[4], sizeof id.internal - 1);
    CHECK(collCommInitRank(&comm, atoi(argv[3]), id, atoi(argv[2])));
  } else {
    fprintf(stderr, "usage: c_api_example env | id N\n");
    return 2;
  }
  int failed = exercise(comm) || exercise_backend_collectives(comm);
  CHECK(collCommDestroy(comm));
  while (wait(&failed) > 0) { /* reap the ranks we started */
    if (!WIFEXITED(failed) || WEXITSTATUS(failed) != 0) return 1;
  }
  return failed;
}
