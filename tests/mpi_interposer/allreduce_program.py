"""An ordinary mpi4py program, not written for libcoll: MPI.Allreduce on numpy arrays of several
types, operations and sizes, on COMM_WORLD and on a Split communicator, in and out of place, plus
calls libcoll must leave to MPI (a user op, a derived type, an intercommunicator), and one on a
buffer from MPI_Alloc_mem, and barriers before and after a communicator's first all-reduce.

Inputs are small integers (powers of two for prod) so every result is exact in every type and
reduction order; each result is checked against numpy. Prints, per rank, how many calls were
eligible for libcoll (all-reduces, and barriers on a communicator libcoll already serves) and a
digest of every result, for check_interposer.py to compare.
"""
import hashlib
import sys

import numpy as np
from mpi4py import MPI

DTYPES = [np.float32, np.float64, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64]
OPS = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}
SIZES = [0, 1, 2, 5, 1000, 65537]
LARGE = 1 << 20


def contribution(rank, count, dtype, op):
    index = np.arange(count, dtype=np.int64)
    if op == "prod":  # 1 or 2: a product over <= 8 ranks fits every type
        values = 1 + (index + rank) % 2
    else:
        values = (index * 7 + rank * 3) % 11
        if np.issubdtype(dtype, np.signedinteger) or np.issubdtype(dtype, np.floating):
            values = values - 5
    return values.astype(dtype)


def expected(ranks_in_world, count, dtype, op):
    parts = [contribution(r, count, dtype, op) for r in ranks_in_world]
    if count == 0:
        return np.zeros(0, dtype=dtype)
    stacked = np.stack(parts)
    reduce = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
    return reduce(stacked, axis=0).astype(dtype)


def main():
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    # A split with members in reverse world order, so libcoll ranks differ from world ranks.
    split = world.Split(color=rank % 2, key=-rank)
    digest = hashlib.sha256()
    eligible = 0
    barriers = 0
    case = 0
    world.Barrier()  # before any all-reduce: MPI's
    for comm in (world, split):
        members = comm.allgather(rank)
        for dtype in DTYPES:
            for op_name, op in OPS.items():
                large = op_name == "sum" and dtype in (np.float32, np.int64)
                sizes = SIZES + ([LARGE] if large else [])
                for count in sizes:
                    mine = contribution(rank, count, dtype, op_name)
                    if case % 2:
                        result = mine.copy()
                        comm.Allreduce(MPI.IN_PLACE, result, op=op)
                    else:
                        result = np.empty_like(mine)
                        comm.Allreduce(mine, result, op=op)
                    case += 1
                    if comm.Get_size() > 1:
                        eligible += 1
                    want = expected(members, count, dtype, op_name)
                    if not np.array_equal(result, want):
                        sys.exit(f"rank {rank}: wrong {np.dtype(dtype).name} {op_name} "
                                 f"count {count} on a communicator of {comm.Get_size()}")
                    digest.update(result.tobytes())
        comm.Barrier()  # after the communicator's all-reduces: libcoll's if it has two ranks
        barriers += 1 if comm.Get_size() > 1 else 0

    # A buffer from MPI_Alloc_mem (with the interposer: shared with the node's ranks).
    memory = MPI.Alloc_mem(LARGE * 4)
    shared = np.frombuffer(memory, dtype=np.float32)
    shared[:] = contribution(rank, LARGE, np.float32, "sum")
    world.Allreduce(MPI.IN_PLACE, shared, op=MPI.SUM)
    eligible += 1 if world.Get_size() > 1 else 0
    if not np.array_equal(shared, expected(range(world.Get_size()), LARGE, np.float32, "sum")):
        sys.exit(f"rank {rank}: wrong result in an MPI_Alloc_mem buffer")
    digest.update(shared.tobytes())
    del shared
    MPI.Free_mem(memory)

    # Left to MPI: a user op, a derived type, an intercommunicator.
    user_sum = MPI.Op.Create(lambda a, b, t: np.add(np.frombuffer(a, np.float64),
                                                   np.frombuffer(b, np.float64),
                                                   out=np.frombuffer(b, np.float64)),
                             commute=True)
    data = contribution(rank, 777, np.float64, "sum")
    result = np.empty_like(data)
    world.Allreduce(data, result, op=user_sum)
    pair = MPI.DOUBLE.Create_contiguous(2).Commit()  # Open MPI: user ops only on derived types
    paired = np.empty_like(data[:776])
    world.Allreduce([data[:776], 388, pair], [paired, 388, pair], op=user_sum)
    pair.Free()
    user_sum.Free()
    want = expected(range(world.Get_size()), 777, np.float64, "sum")
    if not (np.array_equal(result, want) and np.array_equal(paired, want[:776])):
        sys.exit(f"rank {rank}: wrong user-op or derived-type result")
    digest.update(result.tobytes())
    if world.Get_size() > 1:
        remote = [r for r in range(world.Get_size()) if r % 2 != rank % 2]
        # Each group's leader (split rank 0) is its highest world rank (key=-rank).
        inter = split.Create_intercomm(0, world, max(remote), tag=7)
        sums = np.empty(3, dtype=np.int64)
        inter.Allreduce(np.full(3, rank, dtype=np.int64), sums, op=MPI.SUM)
        if sums.tolist() != [sum(remote)] * 3:
            sys.exit(f"rank {rank}: wrong intercommunicator result {sums.tolist()}")
        digest.update(sums.tobytes())
        inter.Free()
    split.Free()
    print(f"rank {rank} eligible {eligible} barriers {barriers} digest {digest.hexdigest()}",
          flush=True)


if __name__ == "__main__":
    main()
