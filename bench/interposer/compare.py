"""Plain MPI against MPI with libcoll_mpi.so preloaded: allreduce_timing.py under mpirun for each
rank count, the two runs interleaved, repeated; prints a markdown table of medians over repeats.
usage: compare.py LIBCOLL_MPI [--ranks 2,4] [--sizes BYTES,...] [--repeats 3]"""
import argparse
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("library")
parser.add_argument("--ranks", default="2,4")
parser.add_argument("--sizes", default="8,1024,65536,1048576,16777216")
parser.add_argument("--repeats", type=int, default=3)
parser.add_argument("--python", default="/usr/bin/python3")
args = parser.parse_args()
sizes = args.sizes.split(",")


def run(ranks, preload):
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]
    if preload:
        command += ["-x", f"LD_PRELOAD={args.library}"]
    command += [args.python, os.path.join(here, "allreduce_timing.py"), *sizes]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return {int(b): float(t) for b, t in (line.split() for line in output.splitlines())}


print("| ranks | bytes | MPI (µs) | libcoll_mpi (µs) | MPI / libcoll |")
print("|---:|---:|---:|---:|---:|")
for ranks in map(int, args.ranks.split(",")):
    samples = {False: [], True: []}
    for _ in range(args.repeats):
        for preload in (False, True):
            samples[preload].append(run(ranks, preload))
    for size in map(int, sizes):
        plain = statistics.median(s[size] for s in samples[False])
        interposed = statistics.median(s[size] for s in samples[True])
        print(f"| {ranks} | {size} | {plain:.1f} | {interposed:.1f} | {plain / interposed:.2f} |",
              flush=True)
sys.exit(0)
