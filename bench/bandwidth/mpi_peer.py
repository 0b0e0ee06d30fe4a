#!/usr/bin/python3
"""OpenMPI's MPI_Allreduce timed as collbench times libcoll (a stand-in until bench/peers/ lands).

  mpirun -np N mpi_peer.py sweep BYTES [ITERS WARMUP]
      float32 sum out of place: warm-up calls, barrier, ITERS calls; the mean per call, the
      slowest rank's (collbench's sweep). Buffers are filled (pre-touched) before timing.
  mpirun -np N mpi_peer.py replay MODEL_CSV [ITERS WARMUP]
      one training iteration's gradients (the table's tensors back to back in one buffer):
      per_tensor = one MPI_Allreduce per tensor, in table order; fused = one MPI_Allreduce over
      the flat buffer. Median over ITERS iterations of the slowest rank.
Prints one JSON line (rank 0).
"""
import json
import sys
import time

import numpy
from mpi4py import MPI


def slowest(comm, seconds):
    return comm.allreduce(seconds, op=MPI.MAX)


def sweep(comm, nbytes, iters, warmup):
    count = nbytes // 4
    send = numpy.full(count, comm.rank + 1, dtype=numpy.float32)
    recv = numpy.zeros(count, dtype=numpy.float32)
    for _ in range(warmup):
        comm.Allreduce(send, recv, op=MPI.SUM)
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(iters):
        comm.Allreduce(send, recv, op=MPI.SUM)
    mean = slowest(comm, (time.perf_counter() - start) / iters)
    expected = comm.size * (comm.size + 1) / 2
    wrong = comm.allreduce(int(numpy.count_nonzero(recv != expected)), op=MPI.SUM)
    return {"mode": "sweep", "bytes": nbytes, "time_us": mean * 1e6, "wrong": wrong}


def replay(comm, table, iters, warmup):
    counts = []
    with open(table) as rows:
        header = None
        for line in rows:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.strip().split(",")
            if header is None:
                header = fields
                continue
            counts.append(int(fields[header.index("elements")]))
    total = sum(counts)
    send = numpy.full(total, comm.rank + 1, dtype=numpy.float32)
    recv = numpy.zeros(total, dtype=numpy.float32)
    slices = []
    offset = 0
    for count in counts:
        slices.append((send[offset:offset + count], recv[offset:offset + count]))
        offset += count

    def per_tensor():
        for mine, result in slices:
            comm.Allreduce(mine, result, op=MPI.SUM)

    def fused():
        comm.Allreduce(send, recv, op=MPI.SUM)

    times = {}
    for name, run in (("per_tensor", per_tensor), ("fused", fused)):
        samples = []
        for i in range(warmup + iters):
            comm.Barrier()
            start = time.perf_counter()
            run()
            elapsed = slowest(comm, time.perf_counter() - start)
            if i >= warmup:
                samples.append(elapsed)
        times[name + "_ms"] = sorted(samples)[len(samples) // 2] * 1e3
    return {"mode": "replay", "table": table, "tensors": len(counts), "bytes": total * 4, **times}


def main():
    comm = MPI.COMM_WORLD
    mode, what = sys.argv[1], sys.argv[2]
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    if mode == "sweep":
        result = sweep(comm, int(what), iters, warmup)
    elif mode == "replay":
        result = replay(comm, what, iters, warmup)
    else:
        sys.exit("mpi_peer.py: mode must be sweep or replay")
    if comm.rank == 0:
        result.update({"ranks": comm.size})
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
