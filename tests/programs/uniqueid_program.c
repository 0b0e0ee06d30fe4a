/* The NCCL-shaped start-up through the C API, as an NCCL program does it under mpirun: rank 0
 * makes an id with collGetUniqueId (which starts a store in its process), the application hands
 * it to the others (here MPI_Bcast: MPI is used for nothing else), and every rank calls
 * collCommInitRank.
 *   uniqueid_program init            id, init, exact all-reduces of several sizes, destroy
 *   uniqueid_program abort-recreate  id, init, an exact all-reduce, then one that fails on every
 *                                    rank (rank 0 passes another count); every rank calls
 *                                    collCommAbort, rank 0 makes a new id, the ranks init again
 *                                    from it and all-reduce exactly
 * Where the job spans hosts (the ranks' host names differ), each id must name an address other
 * than loopback, which the other hosts can reach; a new id must name a new store. Each rank
 * prints "rank R: <mode> ok ..." when the library behaved, and exits non-zero otherwise. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll.h"
#include "mismatched_allreduce.h"

#define HOST_BYTES 256

static int rank, size;

/* Whether the ranks' host names differ. */
static int spans_hosts(void) {
  char mine[HOST_BYTES] = {0};
  gethostname(mine, sizeof mine - 1);
  char* all = calloc((size_t)size, HOST_BYTES);
  MPI_Allgather(mine, HOST_BYTES, MPI_CHAR, all, HOST_BYTES, MPI_CHAR, MPI_COMM_WORLD);
  int differ = 0;
  for (int r = 1; r < size; ++r) differ |= strcmp(all, all + (size_t)r * HOST_BYTES) != 0;
  free(all);
  return differ;
}

/* Rank 0 makes an id, every rank gets it by MPI_Bcast. The id is opaque to NCCL programs; this
 * test reads libcoll's ("HOST:PORT TOKEN") to see where the store listens. 0 on failure. */
static int share_unique_id(collUniqueId* id, char* address, size_t address_size) {
  int made = 1;
  if (rank == 0 && collGetUniqueId(id) != collSuccess) {
    fprintf(stderr, "rank 0: collGetUniqueId: %s\n", collGetLastError(NULL));
    made = 0;
  }
  MPI_Bcast(&made, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!made) return 0;
  MPI_Bcast(id, (int)sizeof *id, MPI_BYTE, 0, MPI_COMM_WORLD);
  const size_t length = strcspn(id->internal, " ");
  if (length >= sizeof id->internal || length + 1 > address_size) {
    fprintf(stderr, "rank %d: malformed id\n", rank);
    return 0;
  }
  memcpy(address, id->internal, length);
  address[length] = '\0';
  return 1;
}

static int loopback(const char* address) {
  return strncmp(address, "127.", 4) == 0 || strncmp(address, "localhost:", 10) == 0;
}

static int init_rank(collComm_t* comm, collUniqueId id, double* took) {
  const double start = now_seconds();
  if (collCommInitRank(comm, size, id, rank) != collSuccess) {
    fprintf(stderr, "rank %d: collCommInitRank: %s\n", rank, collGetLastError(NULL));
    return 0;
  }
  *took = now_seconds() - start;
  return 1;
}

/* Exact all-reduces: float32 and int64 sums of small integers (exact whatever the order), out of
 * place and in place, at 1 element, at counts the rank count does not divide, and at 1 MiB. */
static int exact_allreduces(collComm_t comm, const char* when) {
  static const size_t counts[] = {1, 3, 1000, 4099, (1u << 18) + 3};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const size_t count = counts[c];
    float* in = malloc(count * sizeof(float));
    float* out = malloc(count * sizeof(float));
    int64_t* wide = malloc(count * sizeof(int64_t));
    for (size_t i = 0; i < count; ++i) {
      in[i] = (float)((size_t)(rank + 1) * (i % 13 + 1));
      wide[i] = (int64_t)(rank + 1) * (int64_t)(i % 1000003) + ((int64_t)1 << 40);
    }
    int ok = collAllReduce(in, out, count, collFloat32, collSum, comm, NULL) == collSuccess &&
             collAllReduce(wide, wide, count, collInt64, collSum, comm, NULL) == collSuccess;
    if (!ok) {
      fprintf(stderr, "rank %d: %s: all-reduce of %zu failed: %s\n", rank, when, count,
              collGetLastError(comm));
      return 0;
    }
    const int64_t ranks_sum = (int64_t)size * (size + 1) / 2;
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      wrong += out[i] != (float)(ranks_sum * (int64_t)(i % 13 + 1));
      wrong += wide[i] != ranks_sum * (int64_t)(i % 1000003) + (int64_t)size * ((int64_t)1 << 40);
    }
    free(in);
    free(out);
    free(wide);
    if (wrong != 0) {
      fprintf(stderr, "rank %d: %s: %zu wrong elements in the all-reduces of %zu\n", rank, when,
              wrong, count);
      return 0;
    }
  }
  return 1;
}

static int run_init(int across) {
  collUniqueId id;
  char address[COLL_UNIQUE_ID_BYTES];
  collComm_t comm;
  double took;
  if (!share_unique_id(&id, address, sizeof address)) return 1;
  if (across && loopback(address)) {
    fprintf(stderr, "rank %d: the id names %s, which other hosts cannot reach\n", rank, address);
    return 1;
  }
  if (!init_rank(&comm, id, &took)) return 1;
  int count = 0, me = -1;
  if (collCommCount(comm, &count) != collSuccess || collCommUserRank(comm, &me) != collSuccess ||
      count != size || me != rank) {
    fprintf(stderr, "rank %d: the communicator says rank %d of %d\n", rank, me, count);
    return 1;
  }
  if (!exact_allreduces(comm, "init")) return 1;
  if (collCommDestroy(comm) != collSuccess) return 1;
  printf("rank %d: init ok: store %s, init %.3f s\n", rank, address, took);
  return 0;
}

static int run_abort_recreate(int across) {
  collUniqueId id;
  char first[COLL_UNIQUE_ID_BYTES], second[COLL_UNIQUE_ID_BYTES];
  collComm_t comm;
  double took;
  if (!share_unique_id(&id, first, sizeof first)) return 1;
  if (!init_rank(&comm, id, &took) || !exact_allreduces(comm, "first communicator")) return 1;

  /* The job's abort fails every rank's pending call: without the barrier, a rank still finishing
   * the last exact all-reduce would fail there (docs/reliability.md). */
  MPI_Barrier(MPI_COMM_WORLD);
  double failed;
  if (!mismatched_allreduce_fails(comm, rank, &failed)) return 1;
  if (collCommAbort(comm) != collSuccess) {
    fprintf(stderr, "rank %d: collCommAbort: %s\n", rank, collGetLastError(NULL));
    return 1;
  }
  const double aborted = now_seconds();

  /* Recovery: a new id names a new store. */
  if (!share_unique_id(&id, second, sizeof second)) return 1;
  if (strcmp(first, second) == 0) {
    fprintf(stderr, "rank %d: the new id names the old store %s\n", rank, first);
    return 1;
  }
  if (across && loopback(second)) {
    fprintf(stderr, "rank %d: the new id names %s, which other hosts cannot reach\n", rank, second);
    return 1;
  }
  if (!init_rank(&comm, id, &took)) return 1;
  const double ready = now_seconds();
  if (!exact_allreduces(comm, "after re-creating")) return 1;
  if (collCommDestroy(comm) != collSuccess) return 1;
  printf(
      "rank %d: abort-recreate ok: store %s then %s; abort %.3f s, new id to a working "
      "communicator %.3f s (init %.3f s)\n",
      rank, first, second, aborted - failed, ready - aborted, took);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  const int across = spans_hosts();
  int failed = 2;
  if (strcmp(mode, "init") == 0) {
    failed = run_init(across);
  } else if (strcmp(mode, "abort-recreate") == 0) {
    failed = run_abort_recreate(across);
  } else if (rank == 0) {
    fprintf(stderr, "uniqueid_program: unknown mode '%s' (init, abort-recreate)\n", mode);
  }
  fflush(stdout);
  /* A rank that failed leaves without waiting for the others (they may wait in libcoll); mpirun
   * then ends the job with a non-zero status. */
  if (failed) MPI_Abort(MPI_COMM_WORLD, failed);
  MPI_Finalize();
  return 0;
}
