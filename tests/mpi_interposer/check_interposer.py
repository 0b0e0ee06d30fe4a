"""Runs allreduce_program.py under mpirun with and without libcoll_mpi.so preloaded and checks
that every rank's results are identical, that libcoll ran exactly the all-reduces and barriers
it should (its COLL_MPI_DEBUG line against the program's counts of eligible calls) and that
COLL_MPI_INTERPOSE=0 turns it off.

usage: check_interposer.py PYTHON MPIRUN LIBCOLL_MPI PROGRAM
"""
import re
import subprocess
import sys

RESULT = re.compile(r"rank (\d+) eligible (\d+) barriers (\d+) digest ([0-9a-f]{64})")
COUNTS = re.compile(r"libcoll_mpi: MPI_COMM_WORLD rank (\d+): (\d+) MPI_Allreduce calls ran on "
                    r"libcoll, (\d+) went to MPI.*; (\d+) MPI_Barrier calls ran on libcoll, "
                    r"(\d+) went to MPI; (\d+) MPI_Alloc_mem buffer")


def run(python, mpirun, program, ranks, environment):
    command = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
               "-x", "COLL_TIMEOUT=120"]
    for name, value in environment.items():
        command += ["-x", f"{name}={value}"]
    command += [python, program]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {done.returncode}:\n{output}")
    results = {int(r): (int(e), int(b), d) for r, e, b, d in RESULT.findall(output)}
    counts = {int(r): tuple(map(int, rest)) for r, *rest in COUNTS.findall(output)}
    if sorted(results) != list(range(ranks)):
        sys.exit(f"FAIL: not every rank reported a result:\n{output}")
    return results, counts


def main():
    python, mpirun, library, program = sys.argv[1:5]
    for ranks in (2, 3, 4):
        plain, plain_counts = run(python, mpirun, program, ranks, {})
        preloaded, counts = run(python, mpirun, program, ranks,
                                {"LD_PRELOAD": library, "COLL_MPI_DEBUG": "1"})
        if plain_counts:
            sys.exit("FAIL: libcoll_mpi reported counts without being preloaded")
        if preloaded != plain:
            sys.exit(f"FAIL: {ranks} ranks: results differ with the interposer:\n"
                     f"plain {plain}\npreloaded {preloaded}")
        for rank, (eligible, barriers, _) in plain.items():
            on_libcoll, to_mpi, barriers_on_libcoll, barriers_to_mpi, shared = counts.get(
                rank, (-1,) * 5)
            # A user op, a derived type and an intercommunicator at least go to MPI.
            if on_libcoll != eligible or to_mpi < 3:
                sys.exit(f"FAIL: {ranks} ranks, rank {rank}: {on_libcoll} calls on libcoll "
                         f"(expected {eligible}), {to_mpi} to MPI (expected >= 3)")
            # The barrier before the first all-reduce at least goes to MPI.
            if barriers_on_libcoll != barriers or barriers_to_mpi < 1:
                sys.exit(f"FAIL: {ranks} ranks, rank {rank}: {barriers_on_libcoll} barriers on "
                         f"libcoll (expected {barriers}), {barriers_to_mpi} to MPI (expected >= 1)")
            if shared != 1:
                sys.exit(f"FAIL: {ranks} ranks, rank {rank}: {shared} MPI_Alloc_mem buffers "
                         "from allocate_shared (expected 1)")
        print(f"{ranks} ranks: identical results; libcoll ran "
              f"{', '.join(str(counts[r][0]) for r in sorted(counts))} calls per rank, "
              f"MPI {', '.join(str(counts[r][1]) for r in sorted(counts))}")
    disabled, counts = run(python, mpirun, program, 2, {"LD_PRELOAD": library, "COLL_MPI_DEBUG": "1",
                                                "COLL_MPI_INTERPOSE": "0"})
    if any(on_libcoll or barriers or shared for on_libcoll, _, barriers, _, shared in counts.values())\
            or len(counts) != 2:
        sys.exit(f"FAIL: COLL_MPI_INTERPOSE=0 still ran calls on libcoll: {counts}")
    print("COLL_MPI_INTERPOSE=0: every call went to MPI")


if __name__ == "__main__":
    main()
