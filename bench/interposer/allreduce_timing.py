"""An mpi4py program timing MPI.Allreduce (float32, sum) per message size: prints, on rank 0,
one line per size with the median over iterations of the slowest rank's time.
usage: mpirun -np N python3 allreduce_timing.py BYTES... [--iterations K]"""
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
arguments = sys.argv[1:]
iterations = 20
if "--iterations" in arguments:
    at = arguments.index("--iterations")
    iterations = int(arguments[at + 1])
    del arguments[at:at + 2]
for size in map(int, arguments):
    send = np.ones(size // 4, dtype=np.float32)
    recv = np.empty_like(send)
    for _ in range(3):
        world.Allreduce(send, recv, op=MPI.SUM)
    times = []
    for _ in range(iterations):
        world.Barrier()
        start = time.perf_counter()
        world.Allreduce(send, recv, op=MPI.SUM)
        times.append(world.allreduce(time.perf_counter() - start, op=MPI.MAX))
    if world.Get_rank() == 0:
        print(f"{size} {statistics.median(times) * 1e6:.1f}", flush=True)
