// OpenMPI's MPI_Allreduce timed the way collbench times a sweep: warm-up, a barrier, `iters`
// back-to-back calls, the mean per call of the slowest rank. Buffers are pre-touched (and come
// from huge pages when the launcher sets GLIBC_TUNABLES, as bench/results/README.md does).
// Prints one JSON object: {"peer": "mpi", "ranks": N, "results": [{"bytes": B, "time_us": T}]}.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t min_bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 8;
  const size_t max_bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536;
  const int iters = argc > 3 ? atoi(argv[3]) : 2000;
  const int warmup = argc > 4 ? atoi(argv[4]) : 200;
  float* send = malloc(max_bytes);
  float* recv = malloc(max_bytes);
  memset(send, 0, max_bytes);
  memset(recv, 0, max_bytes);
  for (size_t i = 0; i < max_bytes / sizeof(float); ++i) send[i] = (float)(rank + 1);
  if (rank == 0) printf("{\"peer\": \"mpi\", \"ranks\": %d, \"results\": [", size);
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const int count = (int)(bytes / sizeof(float));
    for (int i = 0; i < warmup; ++i)
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double mean = (MPI_Wtime() - start) / iters, slowest = 0;
    MPI_Reduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%s{\"bytes\": %zu, \"time_us\": %.3f}", bytes == min_bytes ? "" : ", ", bytes,
             slowest * 1e6);
  }
  if (rank == 0) printf("]}\n");
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
