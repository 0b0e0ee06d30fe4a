#!/usr/bin/python3
"""Shared buffers against plain ones: libcoll's all-reduce on one node, interleaved.

Each round runs collbench twice, `--buffers shared` (coll::allocate_shared, mapped by the node's
peers) then `--buffers private` (plain memory, read by system calls), with the same sizes, and
the table gives per size the median over the rounds of each and private / shared (> 1: shared
faster), out of place and in place. Every run must report 0 wrong; the exit status is 1 otherwise.

    bench/buffers_ab.py --build build --ranks 2 --rounds 3 -b 1M -e 64M -f 4 -n 20 -w 3 --json F
"""
import argparse
import json
import statistics
import subprocess
import sys


def run_collbench(args, buffers, round_index):
    command = [f"{args.build}/bench/collbench", "--nodes", "1", "--ranks-per-node",
               str(args.ranks), "--buffers", buffers, "-b", args.b, "-e", args.e, "-f", args.f,
               "-n", str(args.n), "-w", str(args.w), "--json", "/dev/stdout"]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"buffers_ab: {' '.join(command)} failed: {result.stderr.strip()}")
    # Among collbench's table lines (each starting with '#' or a size), the JSON is one line.
    report = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    if report["wrong_total"] != 0:
        sys.exit(f"buffers_ab: {buffers} round {round_index}: {report['wrong_total']} wrong")
    return command, report["results"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-b", default="1M")
    parser.add_argument("-e", default="64M")
    parser.add_argument("-f", default="4")
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("-w", type=int, default=3)
    parser.add_argument("--json", help="write the rounds and the table here")
    args = parser.parse_args()

    times = {}  # (buffers, placement, bytes) -> [us per round]
    commands = {}
    for round_index in range(args.rounds):
        for buffers in ("shared", "private"):
            commands[buffers], rows = run_collbench(args, buffers, round_index)
            for row in rows:
                for placement in ("out_of_place", "in_place"):
                    times.setdefault((buffers, placement, row["bytes"]), []).append(
                        row[placement]["time_us"])
    sizes = sorted({size for (_, _, size) in times})
    table = []
    print(f"# {args.ranks} ranks, {args.rounds} interleaved rounds, medians (us)")
    print("| bytes | placement | shared | private | private / shared |")
    print("|---|---|---|---|---|")
    for size in sizes:
        for placement in ("out_of_place", "in_place"):
            shared = statistics.median(times[("shared", placement, size)])
            private = statistics.median(times[("private", placement, size)])
            table.append({"bytes": size, "placement": placement, "shared_us": shared,
                          "private_us": private, "private_over_shared": private / shared})
            print(f"| {size} | {placement} | {shared:.1f} | {private:.1f} | "
                  f"{private / shared:.2f} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"ranks": args.ranks, "rounds": args.rounds, "commands": commands,
                       "rounds_us": {f"{b} {p} {s}": t for (b, p, s), t in times.items()},
                       "table": table}, out, indent=1)


if __name__ == "__main__":
    main()
