#!/usr/bin/python3
"""libcoll through libcoll_mpi.so against Open MPI in one process, blocks of calls alternated.

bench/peers/mpi_allreduce --alternate K, with libcoll_mpi.so preloaded, times per size K blocks
of back-to-back MPI_Allreduce calls (libcoll's, through the interposer) alternating with K of
PMPI_Allreduce (Open MPI's own path, which the interposer never takes), on the same buffers in
the same process. Neighbouring blocks meet the same moment of the machine, so the median of the
K block-pair ratios holds where separate launches do not: this VM runs in phases in which copies
are up to 3x slower (docs/mpi-interposer.md), and a launch lands in one or the other. Each rank
count runs under Open MPI's ob1 and UCX paths (the settings bench/peers/compare.py gives them);
each path's ratio is the median of its block pairs, and "mpi best / interposed" the smaller of
the two: the path that came closest to libcoll in its own launch.

With --against libcoll the other blocks call coll::Comm::allreduce directly, on a communicator the
program makes for itself, as collbench calls it: the same library, buffers and sizes with and
without the interposer in between, so "interposed / direct" is what the interposer itself costs
(issue 45's first item, which separate launches of collbench and the MPI program cannot settle
here). One launch per rank count and sweep; Open MPI only carries the bootstrap.
usage: alternate.py [--build DIR] [--ranks 2,4] [--blocks 7] [--against pmpi|libcoll]
                    [--json F] [--markdown F]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
from compare import MPIRUN, mpi_paths  # noqa: E402  (Open MPI's paths, tuned as for collbench)

# Calls per block: enough that a block outlasts a scheduler tick, few enough for 64 MiB.
SWEEPS = (["-b", "8", "-e", "32K", "-f", "8", "-n", "2000", "-w", "200"],
          ["-b", "64K", "-e", "1M", "-f", "4", "-n", "200", "-w", "20"],
          ["-b", "2M", "-e", "64M", "-f", "2", "-n", "10", "-w", "2"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--against", choices=("pmpi", "libcoll"), default="pmpi")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    driver = os.path.join(args.build, "bench", "peers", "mpi_allreduce")
    library = os.path.join(args.build, "libcoll", "mpi", "libcoll_mpi.so")
    paths = mpi_paths(1, []) if args.against == "pmpi" else {"direct": []}
    ratio_key, other_key = f"{args.against}_over_mpi_pairs_median", f"{args.against}_us"
    commands, rows = [], []
    with tempfile.TemporaryDirectory(prefix="interposer-alternate-") as work:
        for ranks in [int(r) for r in args.ranks.split(",")]:
            by_size = {}
            for path, mca in paths.items():
                for index, sweep in enumerate(SWEEPS):
                    out = os.path.join(work, f"{ranks}-{path}-{index}.json")
                    command = [*MPIRUN, "-np", str(ranks), *mca, "-x", f"LD_PRELOAD={library}",
                               driver, *sweep, "--alternate", str(args.blocks), "--against",
                               args.against, "--json", out]
                    commands.append(" ".join(command))
                    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                          timeout=1800)
                    if done.returncode != 0:
                        sys.exit(f"alternate: failed: {commands[-1]}\n{done.stderr[-2000:]}")
                    with open(out) as handle:
                        for result in json.load(handle)["results"]:
                            by_size.setdefault(result["bytes"], {})[path] = result
            for size, results in sorted(by_size.items()):
                ratios = {p: results[p][ratio_key] for p in results}
                row = {"ranks": ranks, "bytes": size, "ratios": ratios, "blocks": results}
                if args.against == "pmpi":
                    row["mpi best / interposed"] = min(ratios.values())
                    row["mpi best path"] = min(ratios, key=ratios.get)
                else:
                    blocks = results["direct"]
                    row["interposed / direct"] = statistics.median(
                        m / d for m, d in zip(blocks["mpi_us"], blocks[other_key]))
                rows.append(row)
    summary = "mpi best / interposed" if args.against == "pmpi" else "interposed / direct"
    names = list(paths)
    lines = ["| ranks | bytes | " + " | ".join(
        f"{n}: interposed, {n} (µs) | {n} / interposed" for n in names) +
        f" | {summary} |", "|---|---|" + "---|---|" * len(names) + "---|"]
    for row in rows:
        cells = []
        for name in names:
            blocks = row["blocks"][name]
            interposed, own = (statistics.median(blocks[k]) for k in ("mpi_us", other_key))
            cells.append(f"{interposed:.3g}, {own:.3g} | {row['ratios'][name]:.2f}")
        lines.append(f"| {row['ranks']} | {row['bytes']} | " + " | ".join(cells) +
                     f" | {row[summary]:.2f} |")
    other = ("Open MPI's own path" if args.against == "pmpi" else
             "libcoll called directly (coll::Comm::allreduce, as collbench calls it)")
    launches = " (each path its own launch)" if len(names) > 1 else ""
    title = (f"MPI_Allreduce through libcoll_mpi.so against {other} in the same "
             f"process, {args.blocks} alternating blocks per size, float32 sum out of place; "
             f"times: medians of the blocks{launches}; ratios: medians of the block pairs")
    print(title + "\n" + "\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(title + "\n\n" + "\n".join(lines) + "\n")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"tool": "bench/interposer/alternate.py", "blocks": args.blocks,
                       "against": args.against, "commands": commands, "rows": rows}, handle,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
